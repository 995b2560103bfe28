package config

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestEgressPrivateAllowed: egress.private left empty follows the listen
// address (deny beyond loopback, allow on it); a value set wins.
func TestEgressPrivateAllowed(t *testing.T) {
	for _, tc := range []struct {
		name, listen string
		private      EgressPrivate
		want         bool
	}{
		{"loopback default", "127.0.0.1:9309", "", true},
		{"localhost default", "localhost:9309", "", true},
		{"ipv6 loopback default", "[::1]:9309", "", true},
		{"every interface default", "0.0.0.0:9309", "", false},
		{"empty host default", ":9309", "", false},
		{"lan address default", "10.1.2.3:9309", "", false},
		{"open listen allow", "0.0.0.0:9309", EgressPrivateAllow, true},
		{"loopback deny", "127.0.0.1:9309", EgressPrivateDeny, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.Listen, c.Egress.Private = tc.listen, tc.private
			if got := c.EgressPrivateAllowed(); got != tc.want {
				t.Errorf("EgressPrivateAllowed() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEgressLoad: the egress settings from YAML, flags and environment,
// their validation and the suggestion for a misspelt key.
func TestEgressLoad(t *testing.T) {
	file := testsupport.WriteFile(t, "egress.yaml", "egress:\n  private: deny\n  allow_cidrs: [169.254.169.254, \"::ffff:10.0.0.0/104\"]\n")
	c, err := Load([]string{"-config", file, "-egress-deny-cidrs", "10.9.0.0/16"}, testsupport.EnvMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32"), netip.MustParsePrefix("10.0.0.0/8")}
	if c.Egress.Private != EgressPrivateDeny || len(c.Egress.AllowCIDRs) != 2 || c.Egress.AllowCIDRs[0] != want[0] ||
		c.Egress.AllowCIDRs[1] != want[1] || len(c.Egress.DenyCIDRs) != 1 {
		t.Errorf("egress = %+v", c.Egress)
	}
	c, err = Load(nil, testsupport.EnvMap(map[string]string{"ROBOTSGATE_EGRESS_PRIVATE": "allow"}))
	if err != nil || c.Egress.Private != EgressPrivateAllow {
		t.Errorf("from the environment: %v, %+v", err, c.Egress)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"bad value", "egress:\n  private: maybe\n", "egress.private"},
		{"bad cidr", "egress:\n  deny_cidrs: [10.0.0.0/99]\n", "egress.deny_cidrs"},
		{"misspelt key", "egress:\n  privat: deny\n", `did you mean "private"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testsupport.WriteFile(t, "egress.yaml", tc.yaml)
			if _, err := Load([]string{"-config", f}, testsupport.EnvMap(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
