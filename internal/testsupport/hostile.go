package testsupport

// Hostile patterns: the crafted url patterns that robots/rsl and
// robots/tdmrep test their shared matcher's bounded work with.

import (
	"strconv"
	"strings"
)

// HostilePathLen is the length of the crafted paths: max_url_bytes'
// default.
const HostilePathLen = 16 << 10

// PadPath pads p with fill to [HostilePathLen] octets.
func PadPath(p, fill string) string {
	if len(p) < HostilePathLen {
		p += strings.Repeat(fill, (HostilePathLen-len(p))/len(fill)+1)
	}
	return p[:HostilePathLen]
}

// pad5 is i in 5 digits.
func pad5(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", 5-len(s)) + s
}

// letterTokens returns n distinct 2-octet tokens of letters.
func letterTokens(n int) []string {
	var toks []string
	for a := byte('A'); a <= 'Z' && len(toks) < n; a++ {
		for c := byte('a'); c <= 'z' && len(toks) < n; c++ {
			toks = append(toks, string([]byte{a, c}))
		}
	}
	return toks
}

// OrderPath returns the path of the tokens toks each after a 'q', in
// their order, padded with 'q's to [HostilePathLen] octets: a pattern
// that asks for two of them in the other order fails only at its end,
// after a near match at every 'q'.
func OrderPath(toks []string) string {
	var sb strings.Builder
	sb.WriteString("/")
	for _, t := range toks {
		sb.WriteString("q" + t)
	}
	return PadPath(sb.String(), "q")
}

// HostileCase is a crafted document and a path of [HostilePathLen]
// octets that none of its patterns matches, built so that each pattern
// costs as much as it can.
type HostileCase struct {
	Name string
	Body []byte
	Path string
}

// HostileCases returns the crafted cases, each document made by doc from
// its patterns: pattern(0), pattern(1), ... as many as it holds.
func HostileCases(doc func(pattern func(i int) string) []byte) []HostileCase {
	var cs []HostileCase
	for _, sh := range hostileShapes() {
		cs = append(cs, HostileCase{sh.name, doc(sh.pattern), sh.path})
	}
	return cs
}

// hostileShape is one shape of crafted pattern: pattern(i) is the i-th
// pattern of a document, and path the path none of them matches.
type hostileShape struct {
	name    string
	pattern func(i int) string
	path    string
}

// hostileShapes returns the shapes that a document of url patterns is
// crafted from.
func hostileShapes() []hostileShape {
	toks := letterTokens(400)
	orderPath := OrderPath(toks)
	digits := PadPath("/", "a")[:HostilePathLen-10] + "9876543210"
	run := func(i int) string { return "*" + strings.Repeat("a", 16) + pad5(i) }
	return []hostileShape{
		// The shape of the report: a long run of one octet, then digits
		// the path lacks.
		{"run-digits", run, PadPath("/", "a")},
		// The same with every octet of the patterns in the path.
		{"run-digits-present", run, digits},
		// The same patterns spelled with escapes of unreserved octets.
		{"run-escaped", func(i int) string { return "*" + strings.Repeat("%61", 16) + pad5(i) }, digits},
		// Segments that all occur in the path, never in the order asked.
		{"wrong-order", func(i int) string {
			j := 1 + i%200
			k := (i / 200) % j
			return "*q*q" + toks[j] + "*q" + toks[k] + "*q" + strconv.Itoa(i/200/j)
		}, orderPath},
		// Anchored: the suffix is there, the middle out of order.
		{"anchored", func(i int) string {
			j := 1 + i%200
			return "*q" + toks[j] + "*q" + toks[i%j] + "*qq" + strconv.Itoa(i/200) + "$"
		}, orderPath[:HostilePathLen-3] + "qq0"},
		// Many one-octet segments, all found, the last absent.
		{"star-a-many", func(i int) string {
			return "/" + strings.Repeat("*a", 20+i%20) + "*b" + strconv.Itoa(i/20)
		}, PadPath("/b0123456789", "a")},
		// Long needles that nearly match everywhere.
		{"long-near-miss", func(i int) string {
			return "*b*" + strings.Repeat("a", 20+i%10) + "b" + strconv.Itoa(i/10)
		}, PadPath("/b0123456789", "a")},
	}
}

// HostileWork bounds the work of one decision on a document of body: a
// few passes over the path and the octets of the document, and the
// direct searches a decision makes before it indexes the path.
func HostileWork(body []byte, path string) int {
	return 4*len(path) + 2*len(body) + 512<<10
}
