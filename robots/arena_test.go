package robots

import (
	"strings"
	"testing"
	"unsafe"
)

// TestPackOneAllocation: after Parse, the pointer-free arrays of a file
// (records, agents, part indexes, agent index, a cindex's arrays) lie in
// one allocation, each with its capacity at its length, so that an
// append can never write over the next; decisions are those of the
// compiled form.
func TestPackOneAllocation(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: a\nUser-agent: b\nDisallow: /x\n\nUser-agent: *\n")
	for i := range 64 {
		b.WriteString("Disallow: /d" + strings.Repeat("x", i%7) + "/" + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("Allow: /d/ok\n")
	r := Parse([]byte(b.String()))
	ix := r.written[1].part.cindex()
	if ix == nil {
		t.Fatal("no cindex: the test file needs more rules")
	}
	lo, hi := uintptr(unsafe.Pointer(&r.crs[0])), uintptr(unsafe.Pointer(&r.crs[0]))+uintptr(r.packedWords()*8)
	in := func(name string, p unsafe.Pointer, l, c int) {
		t.Helper()
		if a := uintptr(p); a < lo || a >= hi {
			t.Errorf("%s is not in the arena", name)
		}
		if l != c {
			t.Errorf("%s: cap %d, len %d", name, c, l)
		}
	}
	in("agents", unsafe.Pointer(&r.agents[0]), len(r.agents), cap(r.agents))
	in("gparts", unsafe.Pointer(&r.gparts[0]), len(r.gparts), cap(r.gparts))
	in("byAgent", unsafe.Pointer(&r.byAgent[0]), len(r.byAgent), cap(r.byAgent))
	in("cindex keys", unsafe.Pointer(&ix.keys[0]), len(ix.keys), cap(ix.keys))
	in("cindex ids", unsafe.Pointer(&ix.ids[0]), len(ix.ids), cap(ix.ids))
	if len(r.crs) != cap(r.crs) {
		t.Errorf("crs: cap %d, len %d", cap(r.crs), len(r.crs))
	}
	c := parseMode([]byte(b.String()), true)
	for _, agent := range []string{"a", "b", "c"} {
		for _, p := range []string{"/x", "/dxx/c", "/d/ok", "/d/a", "/dxxxxxx/g", "/e"} {
			if got, want := r.MatchPath(agent, p), c.MatchPath(agent, p); got != want {
				t.Errorf("%s %s: %+v, compiled %+v", agent, p, got, want)
			}
		}
	}
}
