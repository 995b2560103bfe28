package robots

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// mixedEndings returns a robots.txt of about size bytes whose lines end in
// LF, CR, CRLF and runs of them, with a byte order mark (or a prefix of
// one) now and then, long comments, and rules of all kinds.
func mixedEndings(rng *rand.Rand, size int) []byte {
	var sb strings.Builder
	if rng.IntN(3) == 0 {
		sb.WriteString("\xEF\xBB\xBF"[:1+rng.IntN(3)])
	}
	eols := []string{"\n", "\r", "\r\n", "\n\r", "\r\r\n", "\r\n\n"}
	agents := []string{"*", "a", "A", "b", "Bb", "c/1.0", "* y"}
	pats := []string{"/", "/a", "/a/b", "/*.pdf$", "/x*y", "", "/index.html", "/é", "/%7Ea", "/a$", "/b/index.htm"}
	for sb.Len() < size {
		switch rng.IntN(6) {
		case 0:
			sb.WriteString("User-agent: " + agents[rng.IntN(len(agents))])
		case 1:
			sb.WriteString("Allow: " + pats[rng.IntN(len(pats))])
		case 2, 3:
			sb.WriteString("Disallow: " + pats[rng.IntN(len(pats))] + strings.Repeat("z", rng.IntN(3)))
		default:
			sb.WriteString("# " + strings.Repeat("x", rng.IntN(600)))
		}
		sb.WriteString(eols[rng.IntN(len(eols))])
	}
	return []byte(sb.String())
}

// TestLinesFromOffsets checks that the lines of compact parts' rules,
// counted from their offsets, are those the parser counted, for files
// past several line checkpoints with every kind of line ending: the
// compiled form keeps the parser's line numbers.
func TestLinesFromOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	paths := []string{"/", "/a", "/a/b", "/x.pdf", "/xzy", "/index.html", "/b/", "/%C3%A9", "/~a", "/az"}
	for round := 0; round < 200; round++ {
		body := mixedEndings(rng, 256+rng.IntN(12<<10))
		r, c := Parse(body), parseCompiled(body)
		if r.ix.Form().Records == 0 {
			continue
		}
		if gr, gc := r.Groups(), c.Groups(); !reflect.DeepEqual(gr, gc) {
			t.Fatalf("Groups: compact %+v, compiled %+v\n%q", gr, gc, body)
		}
		for _, a := range []string{"a", "b", "bb", "c", "other"} {
			if gr, gc := r.Group(a), c.Group(a); !reflect.DeepEqual(gr, gc) {
				t.Fatalf("Group(%q): compact %+v, compiled %+v\n%q", a, gr, gc, body)
			}
			for _, p := range paths {
				if dr, dc := r.MatchPath(a, p), c.MatchPath(a, p); dr != dc {
					t.Fatalf("MatchPath(%q, %q): compact %+v, compiled %+v\n%q", a, p, dr, dc, body)
				}
			}
		}
	}
}

// TestGroupAgentsOrder checks the agents of merged groups: the tokens, as
// first written, in order of first appearance, then "*".
func TestGroupAgentsOrder(t *testing.T) {
	body := "User-agent: zed\nUser-agent: Bee\nDisallow: /a\n\n" +
		"User-agent: *\nUser-agent: alpha\nDisallow: /b\n\n" +
		"User-agent: BEE\nUser-agent: ZED\nUser-agent: yak\nDisallow: /c\n\n" +
		"User-agent: Alpha\nUser-agent: *\nAllow: /d\n"
	r := Parse([]byte(body))
	for _, tt := range []struct {
		agent string
		want  []string
	}{
		{"bee", []string{"zed", "Bee"}},
		{"ZED", []string{"zed", "Bee"}},
		{"alpha", []string{"alpha", "*"}},
		{"other", []string{"alpha", "*"}},
		{"yak", []string{"yak"}},
	} {
		if g := r.Group(tt.agent); g == nil || !reflect.DeepEqual(g.Agents, tt.want) {
			t.Errorf("Group(%q).Agents = %v, want %v", tt.agent, g, tt.want)
		}
	}
	want := [][]string{{"zed", "Bee"}, {"*", "alpha"}, {"BEE", "ZED", "yak"}, {"Alpha", "*"}}
	for i, g := range r.Groups() {
		if !reflect.DeepEqual(g.Agents, want[i]) {
			t.Errorf("Groups()[%d].Agents = %v, want %v", i, g.Agents, want[i])
		}
	}
}
