package config

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

func loadSites(t *testing.T, yml string) ([]Site, error) {
	t.Helper()
	cfg, err := Load([]string{"-config", testsupport.WriteFile(t, "c.yaml", yml)}, testsupport.EnvMap(nil))
	return cfg.Sites, err
}

func TestSitesLoadCanonical(t *testing.T) {
	sites, err := loadSites(t, `
sites:
  - match: "*.Example.ORG"
    policy: deny
  - match: HTTPS://Partner.Example:443
    policy: allow
    note: "written permission of 2026-10-01, ticket 123"
  - match: slow.example
    crawl_delay: 10s
  - match: news.example
    purposes: [search]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 4 {
		t.Fatalf("%d sites", len(sites))
	}
	if sites[0].Domain != "example.org" || sites[0].Policy != SitePolicyDeny {
		t.Errorf("wildcard: %+v", sites[0])
	}
	if sites[1].Origin != "https://partner.example" || sites[1].Note == "" {
		t.Errorf("origin: %+v", sites[1])
	}
	if sites[2].Host != "slow.example" || sites[2].CrawlDelay != 10*time.Second {
		t.Errorf("host: %+v", sites[2])
	}
	if !sites[3].HasPurposes || sites[3].Purposes != aipref.SetOf(aipref.Search) {
		t.Errorf("purposes: %+v", sites[3])
	}
}

func TestSitesErrors(t *testing.T) {
	for _, c := range []struct{ yml, want string }{
		{"sites:\n  - match: partner.example\n    policy: allow\n", "needs a note"},
		{"sites:\n  - match: x.example\n    policy: maybe\n", `policy "maybe" is not allow or deny`},
		{"sites:\n  - match: x.example\n", "says nothing"},
		{"sites:\n  - match: x.example\n    policy: deny\n    crawl_delay: 5s\n", "no effect"},
		{"sites:\n  - match: ftp://x.example\n    policy: deny\n", "want http or https"},
		{"sites:\n  - match: https://x.example/path\n    policy: deny\n", "no path"},
		{"sites:\n  - match: x.example:8080\n    policy: deny\n", "has no port"},
		{"sites:\n  - match: a*.example\n    policy: deny\n", "leading"},
		{"sites:\n  - match: \"*.10.0.0.1\"\n    policy: deny\n", "not an address"},
		{"sites:\n  - match: \"\"\n    policy: deny\n", "empty"},
		{"sites:\n  - match: x.example\n    crawl_delay: 2h\n", "max_crawl_delay"},
		{"sites:\n  - match: x.example\n    polcy: deny\n", `polcy: unknown key`},
		{"sites:\n  - match: x.example\n    purposes: [nap]\n", "unknown purpose"},
		{"sites: x.example\n", "want a list of mappings"},
		{"sites:\n  - match: x.example\n    crawl_delay: 1s\n  - match: X.example\n    crawl_delay: 2s\n", "merge them"},
	} {
		_, err := loadSites(t, c.yml)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.yml, err, c.want)
		}
	}
}

func TestSiteForSpecificity(t *testing.T) {
	sites, err := loadSites(t, `
sites:
  - match: "*.example.org"
    policy: deny
  - match: "*.shop.example.org"
    crawl_delay: 3s
  - match: api.shop.example.org
    policy: allow
    note: ticket 1
  - match: https://api.shop.example.org
    crawl_delay: 5s
  - match: tie.example
    policy: allow
    note: ticket 2
  - match: tie.example
    policy: deny
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ origin, want string }{
		{"https://api.shop.example.org", "https://api.shop.example.org"}, // origin > host
		{"http://api.shop.example.org", "api.shop.example.org"},          // host > wildcard
		{"http://api.shop.example.org:8080", "api.shop.example.org"},     // a host covers every port
		{"https://www.shop.example.org", "*.shop.example.org"},           // longest wildcard
		{"https://www.example.org", "*.example.org"},
		{"https://example.org", ""}, // *. covers subdomains only
		{"https://badexample.org", ""},
		{"https://tie.example", "tie.example"},
	} {
		s, ok := SiteFor(sites, c.origin)
		if got := s.Match; !ok && c.want != "" || ok && got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.origin, got, ok, c.want)
		}
	}
	if s, _ := SiteFor(sites, "https://tie.example"); s.Policy != SitePolicyDeny {
		t.Errorf("equal specificity: %q wins, want deny", s.Policy)
	}
}

// TestSitesCanonicalSpellings: patterns are spelled as enforce.Origin
// spells origins (IDNA A-labels, case, trailing dot, default ports, IPv6
// forms), so every spelling of a host matches.
func TestSitesCanonicalSpellings(t *testing.T) {
	sites, err := loadSites(t, `
sites:
  - match: "*.Bücher.example."
    policy: deny
  - match: "HTTP://[::FFFF:127.0.0.1]:80"
    policy: deny
  - match: "[2001:DB8::1]"
    crawl_delay: 2s
`)
	if err != nil {
		t.Fatal(err)
	}
	if sites[0].Domain != "xn--bcher-kva.example" || sites[1].Origin != "http://127.0.0.1" || sites[2].Host != "2001:db8::1" {
		t.Fatalf("canonical patterns: %q %q %q", sites[0].Domain, sites[1].Origin, sites[2].Host)
	}
	for _, origin := range []string{"https://www.xn--bcher-kva.example", "http://127.0.0.1", "http://[2001:db8::1]:8080"} {
		if _, ok := SiteFor(sites, origin); !ok {
			t.Errorf("%s: no site", origin)
		}
	}
	if _, err := loadSites(t, "sites:\n  - match: \"127.1\"\n    policy: deny\n"); err == nil || !strings.Contains(err.Error(), "sites[0].match") {
		t.Errorf("IPv4 shorthand: %v", err)
	}
}
