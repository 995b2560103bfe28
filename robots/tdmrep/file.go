package tdmrep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// MaxRules is the most rules a File holds. A file with more is refused
// by Parse ([ErrTooManyRules]): ignoring the rules past a limit could
// leave a reserved path unreserved, since the first match wins.
const MaxRules = 10000

// ErrTooManyRules is returned (wrapped) by Parse for a file of more than
// [MaxRules] rules.
var ErrTooManyRules = errors.New("tdmrep: more rules than the limit")

// ErrInvalid is returned (wrapped) by Parse for a body that is not a
// JSON array. The protocol reads such a file as no valid representation:
// the origin does not implement TDMRep.
var ErrInvalid = errors.New("tdmrep: tdmrep.json is not a JSON array of rules")

// Rule is one rule of a tdmrep.json.
type Rule struct {
	// Location is the pattern as written.
	Location string
	// Reservation is the rule's tdm-reservation: Unset when it is
	// missing or not 1 or 0 (a protocol error).
	Reservation Reservation
	// Policy is the rule's tdm-policy, "" when none.
	Policy string
	// N is the rule's position in the file, from 1.
	N int
}

// String quotes r for answers, e.g. `rule 2: location "/b/", tdm-reservation 1`.
func (r *Rule) String() string {
	s := "rule " + strconv.Itoa(r.N) + ": location " + strconv.Quote(r.Location) + ", tdm-reservation " + r.Reservation.String()
	if r.Policy != "" {
		s += ", tdm-policy " + strconv.Quote(r.Policy)
	}
	return s
}

// File is a parsed tdmrep.json: its rules in order.
type File struct {
	Rules []Rule
	// Problems lists what Parse skipped or read as a protocol error, for
	// offline checks.
	Problems []string
	// match holds the rules' locations in canonical form, in order, each
	// pattern number that of its rule in Rules.
	match *robots.FirstMatch
	size  int64
}

// MemSize estimates the heap f holds.
func (f *File) MemSize() int64 {
	if f == nil {
		return 0
	}
	return f.size
}

// heapSize estimates the heap f holds: itself, its rules and problems
// with their strings, and its compiled locations.
func (f *File) heapSize() int64 {
	n := heapsize.Alloc(unsafe.Sizeof(*f)) + heapsize.Slice(f.Rules) + heapsize.Strings(f.Problems) + f.match.MemSize()
	for i := range f.Rules {
		n += heapsize.String(f.Rules[i].Location) + heapsize.String(f.Rules[i].Policy)
	}
	return n
}

// rawRule is a rule as JSON holds it; fields are decoded one by one so
// that a wrong type in one field does not lose the others.
type rawRule map[string]json.RawMessage

// Parse reads a tdmrep.json body: a JSON array of rule objects, each
// with "location" (a string, mandatory), "tdm-reservation" (1 or 0,
// mandatory; as a JSON number, or a string holding one) and
// "tdm-policy" (a string, optional). A rule without a string location
// can match nothing and is skipped; a rule whose tdm-reservation is
// missing or another value is kept with Reservation Unset, so that it
// still stops the search when it matches first. Unknown members are
// ignored. A body that is not a JSON array is [ErrInvalid]; more than
// [MaxRules] rules is [ErrTooManyRules].
func Parse(body []byte) (*File, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if raws == nil { // null
		return nil, fmt.Errorf("%w: null", ErrInvalid)
	}
	if len(raws) > MaxRules {
		return nil, fmt.Errorf("%w: %d rules, at most %d are read", ErrTooManyRules, len(raws), MaxRules)
	}
	f := &File{Rules: make([]Rule, 0, len(raws))}
	pats := make([]robots.Segments, 0, len(raws))
	for i, raw := range raws {
		n := i + 1
		var obj rawRule
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			f.Problems = append(f.Problems, fmt.Sprintf("rule %d: not an object, skipped", n))
			continue
		}
		var loc string
		if err := json.Unmarshal(obj["location"], &loc); err != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("rule %d: no string \"location\", skipped", n))
			continue
		}
		r := Rule{Location: loc, N: n}
		r.Reservation = ruleReservation(obj["tdm-reservation"])
		if r.Reservation == Unset {
			f.Problems = append(f.Problems, fmt.Sprintf("rule %d: \"tdm-reservation\" missing or not 1 or 0 (protocol error: unset)", n))
		}
		if p, ok := obj["tdm-policy"]; ok {
			if err := json.Unmarshal(p, &r.Policy); err != nil {
				f.Problems = append(f.Problems, fmt.Sprintf("rule %d: \"tdm-policy\" is not a string, ignored", n))
			}
			r.Policy = strings.TrimSpace(r.Policy)
		}
		f.Rules = append(f.Rules, r)
		pats = append(pats, canonicalPattern(loc))
	}
	f.match = robots.NewFirstMatch(pats)
	f.size = f.heapSize()
	return f, nil
}

// ruleReservation reads a rule's tdm-reservation member.
func ruleReservation(raw json.RawMessage) Reservation {
	if raw == nil {
		return Unset
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return ParseValue(s)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return Unset
	}
	switch x, err := n.Float64(); {
	case err != nil:
		return Unset
	case x == 1:
		return Reserved
	case x == 0:
		return NotReserved
	}
	return Unset
}

// Match returns the first rule of f whose location matches path (the
// URL's path and query, as sent), nil when none does (the reservation is
// then unset). Matching is case-sensitive, on the canonical
// percent-encoding of both (see canonical). Its cost is bounded as that
// of a robots.txt decision ([robots.FirstMatch]), whatever the rules.
func (f *File) Match(path string) *Rule {
	r, _ := f.matchWork(path)
	return r
}

// matchWork is Match with the count of the work it did (see
// [robots.FirstMatch]), for tests of its bound.
func (f *File) matchWork(path string) (*Rule, int) {
	if f == nil || f.match == nil {
		return nil, 0
	}
	i, work := f.match.IndexWork(canonicalPath(path))
	if i < 0 {
		return nil, work
	}
	return &f.Rules[i], work
}

// Decide returns the file's verdict for path: the first matching rule's
// reservation and, when it reserves, its policy.
func (f *File) Decide(path string) Verdict {
	r := f.Match(path)
	if r == nil {
		return Verdict{}
	}
	v := Verdict{Reservation: r.Reservation, Source: SourceFile, Rule: r.String()}
	if r.Reservation == Reserved {
		v.Policy = r.Policy
	}
	return v
}

// DecideAll returns the verdict the file gives every path alike, when it
// does so by a rule whose location matches every path ("*", "/", "/*";
// [robots.FirstMatch.MatchesEvery]): that rule's, provided every earlier
// rule that can match some path has the same reservation (the first
// match wins, so an earlier rule of another reservation makes paths
// differ). Otherwise the verdict is unset: paths are not all decided
// alike, and only a decision per path can tell them apart.
func (f *File) DecideAll() Verdict {
	if f == nil || f.match == nil {
		return Verdict{}
	}
	var first *Rule
	for i := range f.Rules {
		if !f.match.MatchesSome(i) {
			continue
		}
		r := &f.Rules[i]
		if first == nil {
			first = r
		}
		if r.Reservation != first.Reservation {
			return Verdict{}
		}
		if f.match.MatchesEvery(i) {
			v := Verdict{Reservation: r.Reservation, Source: SourceFile, Rule: r.String()}
			if r.Reservation == Reserved {
				v.Policy = r.Policy
			}
			return v
		}
	}
	return Verdict{}
}
