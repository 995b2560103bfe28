package index

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// plainCandidates returns patterns for TestPlainPattern: every octet alone
// and in context, every escape, '*' and '$' everywhere, non-ASCII, and
// random strings over an alphabet rich in the octets that matter.
func plainCandidates() []string {
	var ps []string
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		ps = append(ps, s, "/"+s, "/a"+s+"b", "/*"+s+"*", "/"+s+"$", "*"+s, s+"$", "/x/"+s+"/index.html")
		esc := "%" + string(hexDigits[c>>4]) + string(hexDigits[c&15])
		ps = append(ps, "/"+esc, "/"+strings.ToLower(esc)+"$", "/a"+esc+"*b", esc, "/"+esc+"/index.htm")
	}
	ps = append(ps, "*", "**", "$", "*$", "$$", "/$$", "/a$b", "/a$b$", "/*$", "/**$", "/a**b", "/a*$*", "%", "%2",
		"/%", "/%2", "/%G1", "/%2G", "/a%", "/é", "/caf\xc3\xa9*", "/\xff$", "/index.htm", "/a/index.html*",
		"*/index.htm$", "/ä/index.htm", "/%41/index.htm")
	rng := rand.New(rand.NewSource(1))
	const alpha = "/*$%aZ09-._~!:?#[]@&'()+,;= \"<>\\^`{|}\x00\x7f\x80\xc3\xa9\xffiAfF2"
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+rng.Intn(12))
		for j := range b {
			if rng.Intn(8) == 0 {
				b[j] = byte(rng.Intn(256))
			} else {
				b[j] = alpha[rng.Intn(len(alpha))]
			}
		}
		ps = append(ps, string(b))
	}
	return ps
}

// TestPlainPattern checks that the fast path of newCrule never accepts a
// pattern whose compiled form differs from its text: for every pattern
// plainPattern accepts, the full check gives the same segments (it
// succeeds), the same precedence and the same flags; and so for the
// directory record of an Allow of ".../index.htm...".
func TestPlainPattern(t *testing.T) {
	accepted := 0
	for _, pat := range plainCandidates() {
		for _, allow := range []bool{false, true} {
			rl := Rule{Allow: allow, Pattern: pat}
			off := 1 << 10
			fast, plain, ok := newCrule(off, rl, nil)
			base := crule{of: uint32(off) << crBits, n: uint16(len(pat))}
			if allow {
				base.of |= uint32(crAllow)
			}
			full, fullOK := compiledCrule(base, rl, nil)
			if !plain {
				if fast != full || ok != fullOK {
					t.Fatalf("%q: not plain, but newCrule %+v %v, full check %+v %v", pat, fast, ok, full, fullOK)
				}
				continue
			}
			accepted++
			if !ok || !fullOK || fast != full {
				t.Fatalf("%q: plain record %+v, full check %+v (segments the same: %v)", pat, fast, full, fullOK)
			}
			if j := lastSlash(pat); allow && j >= 0 && hasPrefix(pat[j:], "/index.htm") {
				src := strings.Repeat(" ", off) + pat
				df, dfOK := dirCrule(src, fast, pat, true)
				dc, dcOK := dirCrule(src, full, pat, false)
				if df != dc || !dfOK || !dcOK {
					t.Fatalf("%q: plain directory %+v, full check %+v %v", pat, df, dc, dcOK)
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no pattern plain")
	}
}

// TestSortCrules checks that sortCrules orders records as a stable sort
// by crule.before does.
func TestSortCrules(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{0, 1, 2, 5, 12, 13, 40, 127, 128, 129, 300, 4096, 4097} {
		crs := make([]crule, 0, n)
		for off := 0; len(crs) < n; off += 1 + rng.Intn(1000) {
			f := uint8(rng.Intn(1 << crBits))
			c := crule{of: uint32(off)<<crBits | uint32(f&^crDir), n: uint16(rng.Intn(9)), prio: uint16(rng.Intn(6))}
			crs = append(crs, c)
			if f&crDir != 0 && len(crs) < n {
				c.of |= uint32(crDir)
				c.prio = uint16(rng.Intn(6))
				crs = append(crs, c)
			}
		}
		rng.Shuffle(len(crs), func(i, j int) { crs[i], crs[j] = crs[j], crs[i] })
		want := slices.Clone(crs)
		slices.SortStableFunc(want, cruleCmp)
		sortCrules(crs)
		if !slices.Equal(crs, want) {
			t.Fatalf("%d records: sortCrules differs from the stable sort", n)
		}
	}
}

// cruleCmp orders records as [crule.before] does, for a stable sort.
func cruleCmp(a, b crule) int {
	switch {
	case a.before(&b):
		return -1
	case b.before(&a):
		return 1
	}
	return 0
}

// before is matcher.before for records of one part, the order that
// sortCrules is held to: a longer pattern, else Allow over Disallow, else
// the earlier line, which is the smaller offset (a directory record, at
// its rule's offset, right after it).
func (c *crule) before(o *crule) bool {
	if c.prio != o.prio {
		return c.prio > o.prio
	}
	if a, b := c.flags()&crAllow != 0, o.flags()&crAllow != 0; a != b {
		return a
	}
	if c.off() != o.off() {
		return c.off() < o.off()
	}
	return c.flags()&crDir == 0 && o.flags()&crDir != 0
}
