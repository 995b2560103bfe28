package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestServeRefusesRedisSettingThatCannotWork starts serve with cache
// settings that answer but can never work (real sentinel, cluster node,
// server): one line naming the setting, exit 2, nothing served.
func TestServeRefusesRedisSettingThatCannotWork(t *testing.T) {
	srv := redistest.Start(t)
	sentinel := redistest.StartLoneSentinel(t, srv, "rgmaster")
	node := redistest.StartClusterNode(t)
	for _, tc := range []struct{ name, url, want string }{
		{"unknown master", "redis-sentinel://" + sentinel.Addr() + "/nosuchmaster",
			"robotsgate: cache: the sentinel at " + sentinel.Addr() + ` answered but knows no master named "nosuchmaster"`},
		{"db out of range", srv.URL(99), "robotsgate: cache: the Redis server at " + srv.Addr() + " has no database 99"},
		{"cluster URL at a plain server", "redis-cluster://" + srv.Addr(), "is not a Redis Cluster node"},
		{"plain URL at a cluster node", node.URL(0), "is a Redis Cluster node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"-listen", "127.0.0.1:0", "-data-dir", t.TempDir(), "-audit-log", "-", "-cache", tc.url}
			// A live context: the start-up checks must not be cut short.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			code := runServe(ctx, args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || !strings.Contains(lines[0], "-cache") {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr.String(), tc.want)
			}
		})
	}
}

// TestServeRedisSettingStopsWorkingLater: a running robotsgate whose
// Redis starts refusing it (a password set) is not ready, says why, and
// its status page summary says "fleet state: local only".
func TestServeRedisSettingStopsWorkingLater(t *testing.T) {
	srv := redistest.Start(t)
	p := startServe(t, []string{"-cache", srv.URL(0), "-audit-log", "-"}, nil)
	base := "http://" + p.addr.String()
	if code, body := getText(t, base+"/readyz"); code != 200 {
		t.Fatalf("/readyz before: %d %s", code, body)
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	if err := admin.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	redistest.WaitFor(t, "/readyz to answer 503", func() bool {
		p.client.Get("http://127.0.0.1:1/") // a request makes robotsgate call Redis
		code, _ := getText(t, base+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	if _, body := getText(t, base+"/readyz"); !strings.Contains(body, "requires a password") || !strings.Contains(body, "local only") {
		t.Fatalf("/readyz body %q", body)
	}
	_, body := getText(t, base+"/v1/status")
	var st struct {
		Info struct {
			Config []struct{ Key, Value string }
		}
	}
	_ = json.Unmarshal([]byte(body), &st)
	if !strings.Contains(body, `"fleet state"`) || !strings.Contains(body, "local only: ") {
		t.Fatalf("/v1/status does not say the fleet state is local only: %s", body)
	}
	if !strings.Contains(p.stderr.String(), `"level":"error"`) {
		t.Fatalf("no error-level log line: %s", p.stderr)
	}
}

// getText GETs u and returns its status and body.
func getText(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
