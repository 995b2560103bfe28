package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// fileLoad is a Deps.Load that loads a configuration file whose reads
// return contents in turn (the last one again once they run out), as a
// file rewritten in place reads, with the environment env.
func fileLoad(env map[string]string, contents ...string) func() (config.Config, error) {
	reads := 0
	fr := config.FileReader{
		Read: func(string) ([]byte, error) {
			c := contents[min(reads, len(contents)-1)]
			reads++
			return []byte(c), nil
		},
		Pause: func() {},
	}
	return func() (config.Config, error) {
		return config.LoadWith([]string{"-config", "robotsgate.yaml", "-data-dir", "/nonexistent"}, testsupport.EnvMap(env), fr)
	}
}

// isSiteDenied asks for a page of host through h and reports whether it
// was refused site-denied.
func isSiteDenied(t *testing.T, h *harness, o *hostOrigin, host string) bool {
	t.Helper()
	resp, body := h.get(t, "http://"+host+":"+o.port()+"/page", "Accept", "application/json")
	var b answer.RefusalBody
	json.Unmarshal([]byte(body), &b)
	return resp.StatusCode == http.StatusForbidden && b.Reason == string(answer.ReasonSiteDenied)
}

// TestReloadNeverAppliesHalfAFile: a reload that reads the file empty is
// refused and the denies stay in force; one that catches the file cut
// short reads it again until it settles and applies the whole file.
func TestReloadNeverAppliesHalfAFile(t *testing.T) {
	o := newHostOrigin(t, "User-agent: *\nAllow: /\n")
	whole := "sites:\n  - match: \"*.partner.test\"\n    policy: deny\n  - match: tie.test\n    policy: deny\n"
	var load func() (config.Config, error)
	h := newHarness(t, harnessOpts{transport: namedTransport(t, NewTransport), policyTransport: namedTransport(t, NewPolicyTransport),
		config: func(c *config.Config) { c.Sites = partnerSites() }, load: func() (config.Config, error) { return load() }})

	load = fileLoad(nil, "")
	res, err := h.srv.Reload("test")
	if err == nil || res.Result != ReloadInvalid || !strings.Contains(res.Error, "holds no setting") {
		t.Fatalf("reload of an empty file: %+v %v, want invalid", res, err)
	}
	if !isSiteDenied(t, h, o, "www.partner.test") {
		t.Fatal("the deny vanished after the refused reload of an empty file")
	}

	load = fileLoad(nil, "", "sites:\n  - match: \"*.partner.test\"\n", whole, whole)
	if res, err := h.srv.Reload("test"); err != nil || res.Result != ReloadOK {
		t.Fatalf("reload of a file caught mid-write: %+v %v", res, err)
	}
	for _, host := range []string{"www.partner.test", "tie.test"} {
		if !isSiteDenied(t, h, o, host) {
			t.Errorf("%s: not denied after the reload of the whole file", host)
		}
	}
}

// TestReloadEmptyAllowed: with reload_allow_empty (from the environment)
// an empty file is applied, and the denies it removes are named in the
// answer and the audit record.
func TestReloadEmptyAllowed(t *testing.T) {
	o := newHostOrigin(t, "User-agent: *\nAllow: /\n")
	h := newHarness(t, harnessOpts{transport: namedTransport(t, NewTransport), policyTransport: namedTransport(t, NewPolicyTransport),
		config: func(c *config.Config) { c.Sites = partnerSites() },
		load:   fileLoad(map[string]string{"ROBOTSGATE_RELOAD_ALLOW_EMPTY": "true"}, "# nothing here\n")})
	res, err := h.srv.Reload("test")
	if err != nil || res.Result != ReloadOK || strings.Join(res.RemovedDenies, ",") != "*.partner.test,tie.test" {
		t.Fatalf("reload of an empty file allowed: %+v %v", res, err)
	}
	if isSiteDenied(t, h, o, "www.partner.test") {
		t.Error("still denied after an allowed empty reload")
	}
	rec := h.audit.Find(t, ReloadOK)
	if d, _ := rec["detail"].(string); !strings.Contains(d, "site denies removed: *.partner.test,tie.test") {
		t.Errorf("audit record of the reload: %v", rec)
	}
}
