package proxy

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// swappable is a configuration source (Deps.Load) a test replaces.
type swappable struct {
	mu  sync.Mutex
	cfg config.Config
	err error
}

func (s *swappable) set(cfg config.Config, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.err = cfg, err
}

func (s *swappable) load() (config.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return config.Config{}, s.err
	}
	return s.cfg, s.cfg.Validate()
}

// TestReloadInFlightUntouched: a request under way when the configuration
// is reloaded is served to its end with the settings it started with
// (robot_tags annotate: its noindex response is annotated, not refused);
// the next request gets the new ones (enforce: 403 robot-tag).
func TestReloadInFlightUntouched(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 2)
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Header().Set("X-Robots-Tag", "noindex")
		w.Write([]byte("page"))
	})
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load})
	base := h.srv.live.Load().cfg

	out := make(chan getResult, 1)
	h.getAsync(t, o.URL+"/a", out)
	<-arrived
	next := base
	next.RobotTags.Mode = config.RobotTagsEnforce
	src.set(next, nil)
	res, err := h.srv.Reload("test")
	if err != nil || res.Result != ReloadOK || strings.Join(res.Changed, ",") != "robot_tags.mode" {
		t.Fatalf("reload: %+v %v", res, err)
	}
	close(release)
	if r := <-out; r.status != 200 || r.header.Get(answer.HeaderIndex) == "" {
		t.Fatalf("in-flight request: %d %v, want 200 annotated (the settings it started with)", r.status, r.header)
	}
	if resp, _ := h.get(t, o.URL+"/b"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonRobotTag) {
		t.Fatalf("request after the reload: %d %v, want 403 robot-tag", resp.StatusCode, resp.Header)
	}
}

// TestReloadInvalidKeepsRunning: a configuration that fails to load, or
// whose settings kept for a restart make it invalid, keeps the running
// one; settings that need a restart are named, not applied. Reloads are
// audited and counted.
func TestReloadInvalidKeepsRunning(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: NewBot\nDisallow: /\n"), nil)
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load, config: func(c *config.Config) { c.AdminToken = "tok" }})
	base := h.srv.live.Load().cfg

	src.set(config.Config{}, errors.New("config file x.yaml: line 3: unknown key \"agnet\""))
	res, err := h.srv.Reload("test")
	if err == nil || res.Result != ReloadInvalid || !strings.Contains(res.Error, "agnet") {
		t.Fatalf("failed load: %+v %v", res, err)
	}
	next := base
	next.Agent = "NewBot"
	next.Listen = "127.0.0.1:1"
	next.Auth.CredentialsFile = "/nonexistent/creds"
	src.set(next, nil)
	if res, err = h.srv.Reload("test"); err == nil || !strings.Contains(res.Error, "/nonexistent/creds") {
		t.Fatalf("unreadable credentials file: %+v %v", res, err)
	}
	if resp, _ := h.get(t, o.URL+"/page"); resp.StatusCode != 200 {
		t.Fatalf("after refused reloads: %d, want the running agent's 200", resp.StatusCode)
	}
	next.Auth.CredentialsFile = ""
	src.set(next, nil)
	res, err = h.srv.Reload("test")
	if err != nil || strings.Join(res.NeedsRestart, ",") != "listen" || strings.Join(res.Changed, ",") != "agent" {
		t.Fatalf("reload: %+v %v", res, err)
	}
	if resp, _ := h.get(t, o.URL+"/page"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("after the reload: %d, want NewBot's 403", resp.StatusCode)
	}
	// POST /v1/reload answers the same, 422 when refused.
	src.set(config.Config{}, errors.New("broken"))
	req := httptest.NewRequest(http.MethodPost, "http://localhost/v1/reload", nil)
	req.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	h.srv.admin.ServeHTTP(w, req)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"error": "broken"`) {
		t.Fatalf("POST /v1/reload: %d %s", w.Code, w.Body)
	}
	var got []string
	for _, rec := range h.audit.Records(t) {
		if rec["kind"] == "config-reload" {
			got = append(got, rec["reason"].(string))
		}
	}
	if strings.Join(got, ",") != "invalid,invalid,ok,invalid" {
		t.Errorf("audited reloads: %v", got)
	}
}

// TestReloadValidatesWithRestartSettings: the configuration put in force
// is validated with the settings that need a restart as they run: a file
// that moves listen to loopback (not applied) and drops the credentials
// is refused, since the proxy still listens beyond loopback.
func TestReloadValidatesWithRestartSettings(t *testing.T) {
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load, config: func(c *config.Config) {
		c.Listen, c.AdminToken = "0.0.0.0:9", "tok"
		c.Auth.Credentials = []string{"crawler:secret"}
		c.Auth.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}})
	next := h.srv.live.Load().cfg
	next.Listen = "127.0.0.1:9309"
	next.Auth.Credentials, next.Auth.AllowCIDRs = nil, nil
	src.set(next, nil)
	res, err := h.srv.Reload("test")
	if err == nil || !strings.Contains(res.Error, "listen") || h.srv.live.Load().cfg.Auth.Credentials == nil {
		t.Fatalf("reload: %+v %v, want refused with the credentials kept", res, err)
	}
}

// TestReloadNothingChanged: a reload of the running configuration is
// audited (and shown on the status page) as "no change", not as an empty
// list; the other details name what changed.
func TestReloadNothingChanged(t *testing.T) {
	src := &swappable{}
	h := newHarness(t, harnessOpts{load: src.load})
	src.set(h.srv.live.Load().cfg, nil)
	if res, err := h.srv.Reload("test"); err != nil || len(res.Changed) != 0 {
		t.Fatalf("reload of the running configuration: %+v %v", res, err)
	}
	var got []string
	for _, rec := range h.audit.Records(t) {
		if rec["kind"] == "config-reload" {
			got = append(got, rec["detail"].(string))
		}
	}
	if strings.Join(got, "|") != "no change" {
		t.Errorf("audited reload details: %q, want [no change]", got)
	}
	for _, tc := range []struct {
		name string
		res  ReloadResult
		want string
	}{
		{"changed", ReloadResult{ReloadResult: admin.ReloadResult{Changed: []string{"agent", "sites"}}}, "changed: agent,sites"},
		{"restart only", ReloadResult{ReloadResult: admin.ReloadResult{NeedsRestart: []string{"listen"}}}, "needs a restart: listen"},
		{"all", ReloadResult{ReloadResult: admin.ReloadResult{Changed: []string{"sites"}, NeedsRestart: []string{"listen"}, RemovedDenies: []string{"a.example"}}},
			"changed: sites; needs a restart: listen; site denies removed: a.example"},
		{"error", ReloadResult{ReloadResult: admin.ReloadResult{Error: "broken", Changed: []string{"agent"}}}, "broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reloadDetail(&tc.res); got != tc.want {
				t.Errorf("detail %q, want %q", got, tc.want)
			}
		})
	}
}
