package config

import (
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestUnknownYAMLKeySuggests: an unknown key names the closest known key
// of its section, or the option of that name in another section; a key
// close to nothing gets no guess.
func TestUnknownYAMLKeySuggests(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"lisen: x\n", `line 1: unknown key "lisen" (did you mean "listen"?)`},
		{"robots:\n  tll: 1h\n", `line 2: unknown key "tll" (did you mean "ttl"?)`},
		{"audit-log: /x\n", `unknown key "audit-log" (did you mean "audit_log"?)`},
		{"Agent: Bot\n", `unknown key "Agent" (did you mean "agent"?)`},
		{"robot:\n  ttl: 1h\n", `unknown key "robot" (did you mean "robots"?)`},
		{"https:\n  upstream_root: [a.pem]\n", `unknown key "upstream_root" (did you mean "upstream_roots"?)`},
		{"max_redirects: 3\n", `unknown key "max_redirects" (did you mean robots.max_redirects, i.e. robots: {max_redirects: ...}?)`},
		{"admin:\n  hosts: [robotsgate]\n", `line 1: unknown key "admin" (did you mean "admin_hosts"?)`},
		{"admin.hosts: [robotsgate]\n", `unknown key "admin.hosts" (did you mean "admin_hosts"?)`},
		{"admin_host: [robotsgate]\n", `unknown key "admin_host" (did you mean "admin_hosts"?)`},
		{"completely_unrelated_thing: 1\n", `unknown key "completely_unrelated_thing"`},
	} {
		_, err := Load([]string{"-config", testsupport.WriteFile(t, "c.yaml", tc.yaml)}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
		if strings.HasSuffix(tc.want, `"completely_unrelated_thing"`) && err != nil && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: a guess for a key close to nothing: %v", tc.yaml, err)
		}
	}
}
