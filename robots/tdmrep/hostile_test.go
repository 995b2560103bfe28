package tdmrep

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// hostileBytes bounds the size of the crafted files: twice robots.max_bytes'
// default (the most a tdmrep.json fetch reads unless raised), so that
// every case holds MaxRules rules.
const hostileBytes = 1 << 20

// hostilePathLen is the length of the crafted paths: max_url_bytes'
// default.
const hostilePathLen = 16 << 10

// hostileCase is a tdmrep.json of up to MaxRules rules within
// hostileBytes, and a path none of its rules matches, built so that each
// rule costs as much as it can.
type hostileCase struct {
	name string
	body []byte
	path string
}

// hostileFile returns a tdmrep.json of rules location(0), location(1), ...
// as long as it fits in hostileBytes and MaxRules.
func hostileFile(location func(i int) string) []byte {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; i < MaxRules; i++ {
		loc, _ := json.Marshal(location(i))
		r := `{"location":` + string(loc) + `,"tdm-reservation":1}`
		if sb.Len()+len(r)+2 > hostileBytes {
			break
		}
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(r)
	}
	sb.WriteString("]")
	return []byte(sb.String())
}

// pad pads p with fill to hostilePathLen octets.
func pad(p, fill string) string {
	if len(p) < hostilePathLen {
		p += strings.Repeat(fill, (hostilePathLen-len(p))/len(fill)+1)
	}
	return p[:hostilePathLen]
}

// tokens returns n distinct 2-octet tokens of letters.
func tokens(n int) []string {
	var toks []string
	for a := byte('A'); a <= 'Z' && len(toks) < n; a++ {
		for c := byte('a'); c <= 'z' && len(toks) < n; c++ {
			toks = append(toks, string([]byte{a, c}))
		}
	}
	return toks
}

func hostileCases() []hostileCase {
	toks := tokens(400)
	var order strings.Builder
	order.WriteString("/")
	for _, t := range toks {
		order.WriteString("q" + t)
	}
	orderPath := pad(order.String(), "q")
	digits := pad("/", "a")[:hostilePathLen-10] + "9876543210"
	return []hostileCase{
		// The shape of the report: a long run of one octet, then digits
		// the path lacks.
		{"run-digits", hostileFile(func(i int) string { return "*" + strings.Repeat("a", 16) + pad5(i) }), pad("/", "a")},
		// The same with every octet of the rules in the path.
		{"run-digits-present", hostileFile(func(i int) string { return "*" + strings.Repeat("a", 16) + pad5(i) }), digits},
		// The same rules spelled with escapes of unreserved octets.
		{"run-escaped", hostileFile(func(i int) string { return "*" + strings.Repeat("%61", 16) + pad5(i) }), digits},
		// Segments that all occur in the path, never in the order asked.
		{"wrong-order", hostileFile(func(i int) string {
			j := 1 + i%200
			k := (i / 200) % j
			return "*q*q" + toks[j] + "*q" + toks[k] + "*q" + strconv.Itoa(i/200/j)
		}), orderPath},
		// Anchored: the suffix is there, the middle out of order.
		{"anchored", hostileFile(func(i int) string {
			j := 1 + i%200
			return "*q" + toks[j] + "*q" + toks[i%j] + "*qq" + strconv.Itoa(i/200) + "$"
		}), orderPath[:hostilePathLen-3] + "qq0"},
		// Many one-octet segments, all found, the last absent.
		{"star-a-many", hostileFile(func(i int) string {
			return "/" + strings.Repeat("*a", 20+i%20) + "*b" + strconv.Itoa(i/20)
		}), pad("/b0123456789", "a")},
		// Long needles that nearly match everywhere.
		{"long-near-miss", hostileFile(func(i int) string {
			return "*b*" + strings.Repeat("a", 20+i%10) + "b" + strconv.Itoa(i/10)
		}), pad("/b0123456789", "a")},
	}
}

// pad5 is i in 5 digits.
func pad5(i int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", 5-len(s)) + s
}

// hostileWork bounds the work of one match against a file of body: a
// few passes over the path and the octets of the file, and the direct
// searches a decision makes before it indexes the path.
func hostileWork(body []byte, path string) int {
	return 4*len(path) + 2*len(body) + 512<<10
}

// TestHostileFileBoundedWork matches the crafted paths against the
// crafted files and checks, with the matcher's count of the octets it
// examined (not a clock), that no rule makes it search the whole path.
func TestHostileFileBoundedWork(t *testing.T) {
	for _, hc := range hostileCases() {
		f, err := Parse(hc.body)
		if err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		r, work := f.matchWork(hc.path)
		if r != nil {
			t.Fatalf("%s: matched %s", hc.name, r)
		}
		if limit := hostileWork(hc.body, hc.path); work > limit {
			t.Errorf("%s (%d rules): %d octets examined, more than %d", hc.name, len(f.Rules), work, limit)
		}
	}
}
