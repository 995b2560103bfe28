package config

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkSiteForManySites looks up the longest host name against 10000
// "*." domain patterns, each a suffix of it but for its first label, and
// none matching: the cost of sites: per request is one comparison per
// entry, whatever the host.
func BenchmarkSiteForManySites(b *testing.B) {
	c := Default()
	for i := range 10000 {
		c.Sites = append(c.Sites, Site{Match: "*.x" + strconv.Itoa(i) + "." + strings.Repeat("a.", 60) + "example", Policy: SitePolicyDeny})
	}
	if err := c.Validate(); err != nil {
		b.Fatal(err)
	}
	origin := "https://" + strings.Repeat("a.", 60) + "example"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := SiteFor(c.Sites, origin); ok {
			b.Fatal("matched")
		}
	}
}

// TestSiteForAllocatesNothing: looking a host up in sites: costs a
// comparison per entry and no allocation (it allocated one string per
// "*." entry per request).
func TestSiteForAllocatesNothing(t *testing.T) {
	c := Default()
	for i := range 100 {
		c.Sites = append(c.Sites, Site{Match: "*.x" + strconv.Itoa(i) + ".long-domain-name-of-a-partner.example", Policy: SitePolicyDeny},
			Site{Match: "h" + strconv.Itoa(i) + ".example", Policy: SitePolicyDeny})
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	const host = "https://a.b.x7.long-domain-name-of-a-partner.example"
	if n := testing.AllocsPerRun(10, func() { SiteFor(c.Sites, host) }); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
	if s, ok := SiteFor(c.Sites, host); !ok || s.Domain != "x7.long-domain-name-of-a-partner.example" {
		t.Fatalf("lookup: %+v %v", s, ok)
	}
	if _, ok := SiteFor(c.Sites, "https://ax7.long-domain-name-of-a-partner.example"); ok {
		t.Fatal("a longer label matched a *. pattern")
	}
}
