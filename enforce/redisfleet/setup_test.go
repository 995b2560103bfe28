package redisfleet

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// newAt returns New's result for rawURL with test options.
func newAt(t *testing.T, rawURL string, log zerolog.Logger) (*Redis, error) {
	t.Helper()
	SetRedisClientLog(zerolog.Nop())
	r, err := New(context.Background(), rawURL, Options{Log: log, MaxBytes: testMaxBytes, Local: newLocalStore(),
		Timeout: time.Second, RetryInterval: 20 * time.Millisecond, LogInterval: time.Hour})
	if err == nil {
		t.Cleanup(func() { _ = r.Close() })
	}
	return r, err
}

// TestSettingThatCannotWorkStopsStart points each kind of cache URL at a
// real server that answers but cannot serve it: New fails with a message
// that says what happened, instead of starting on local state.
func TestSettingThatCannotWorkStopsStart(t *testing.T) {
	srv := redistest.Start(t)
	node := redistest.StartClusterNode(t)
	sentinel := redistest.StartLoneSentinel(t, srv, "rgmaster")
	locked := redistest.Start(t)
	if err := redisClient(t, locked).ConfigSet(context.Background(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := selfSignedPEM(t)
	tlsSrv := redistest.StartTLS(t, certFile, keyFile)
	for _, tc := range []struct{ name, url, want string }{
		{"unknown master", "redis-sentinel://" + sentinel.Addr() + "/nosuchmaster",
			`the sentinel at ` + sentinel.Addr() + ` answered but knows no master named "nosuchmaster"`},
		{"not a sentinel", "redis-sentinel://" + srv.Addr() + "/rgmaster", "is not a sentinel"},
		{"db out of range", srv.URL(99), "the Redis server at " + srv.Addr() + " has no database 99"},
		{"cluster URL at a plain server", "redis-cluster://" + srv.Addr(), "is not a Redis Cluster node"},
		{"plain URL at a cluster node", node.URL(0), "is a Redis Cluster node"},
		{"no password", locked.URL(0), "requires a password and the cache URL gives none"},
		{"wrong password", "redis://:wrong@" + locked.Addr() + "/0", "refused the cache URL's user name and password"},
		{"certificate that does not verify", "rediss://" + tlsSrv.TLSAddr + "/0", "TLS certificate that does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newAt(t, tc.url, zerolog.Nop())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-cache") {
				t.Fatalf("New(%s) = %v, want an error containing %q and naming -cache", tc.url, err, tc.want)
			}
			if strings.Contains(err.Error(), "unreachable") || strings.Contains(err.Error(), "redis: ") {
				t.Fatalf("error in go-redis's wording: %v", err)
			}
		})
	}
	t.Run("the right settings start", func(t *testing.T) {
		for _, u := range []string{srv.URL(1), "redis-sentinel://" + sentinel.Addr() + "/rgmaster"} {
			if _, err := newAt(t, u, zerolog.Nop()); err != nil {
				t.Fatalf("New(%s): %v", u, err)
			}
		}
	})
}

// syncBuf is a log destination safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSettingThatStopsWorkingLater turns a working server into one that
// refuses robotsgate (a password set, connections dropped): Problem says
// so, one error-level line is logged per log interval however many calls
// fall back, and it clears when the server takes robotsgate again.
func TestSettingThatStopsWorkingLater(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncBuf
	r, err := newAt(t, srv.URL(0), zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	admin := redisClient(t, srv)
	ctx := context.Background()
	if err := admin.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	// The admin connection is authenticated already; others are dropped.
	if err := admin.Do(ctx, "CLIENT", "KILL", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	redisWaitFor(t, "a call to fail", func() bool {
		_, _ = r.store.Get(ctx, enforce.RobotsKey("http://example.com", netip.Addr{}))
		return !r.Healthy()
	})
	// The first failure may be the killed connection (an outage); the
	// prober's next PING meets the password and names the problem.
	redisWaitFor(t, "the problem to be named", func() bool {
		_, _ = r.store.Get(ctx, enforce.RobotsKey("http://example.com", netip.Addr{}))
		return strings.Contains(r.Problem(), "requires a password")
	})
	for range 50 {
		_, _ = r.store.Get(ctx, enforce.RobotsKey("http://example.com", netip.Addr{}))
	}
	if n := strings.Count(logs.String(), `"level":"error"`); n != 1 {
		t.Fatalf("%d error-level lines within one log interval, want 1:\n%s", n, logs.String())
	}
	if err := admin.ConfigSet(ctx, "requirepass", "").Err(); err != nil {
		t.Fatal(err)
	}
	redisWaitFor(t, "recovery", r.Healthy)
	if p := r.Problem(); p != "" {
		t.Fatalf("Problem() = %q after recovery", p)
	}
}

// selfSignedPEM writes a self-signed certificate for 127.0.0.1 and its
// key, and returns the two files.
func selfSignedPEM(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redis test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true, IsCA: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
