package robots

import (
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
	"github.com/robotsgate/robotsgate/robots/internal/index"
)

// FirstMatch matches a path against a list of wildcard patterns in which
// the first that matches wins, for the path patterns of other protocols
// (TDMRep's tdmrep.json, RSL's content URLs) that name a file order
// rather than a longest match. Its patterns are compiled, filtered and
// indexed as a robots.txt group's Allow and Disallow patterns are: a path
// costs one pass of the keys' automaton, a few bit tests per pattern,
// and a bounded direct search before the path is indexed, whatever the
// patterns; never a search of the path per pattern.
//
// Patterns and paths are taken as given: the caller puts both in its own
// canonical form first. A pattern is its literal runs between '*'
// wildcards; the first must be a prefix of the path, the others follow in
// order with anything between them, and an anchored pattern ends where the
// path ends.
type FirstMatch struct {
	m *index.FirstMatch
}

// Segments is one pattern of a [FirstMatch]: the literal runs between its
// wildcards (len(Segs)-1 wildcards; Segs[0] is a prefix of the path, maybe
// empty) and whether it ends where the path ends.
type Segments struct {
	Segs     []string
	Anchored bool
}

// NewFirstMatch compiles pats, in order. A pattern identical to an
// earlier one can never be the first to match, and is left out (and
// reported with it by [FirstMatch.AllWork]).
func NewFirstMatch(pats []Segments) *FirstMatch {
	ps := make([]index.Segments, len(pats))
	for i, p := range pats {
		ps[i] = index.Segments(p)
	}
	return &FirstMatch{m: index.NewFirstMatch(ps)}
}

// NewPatternMatch is [NewFirstMatch] for robots.txt patterns as written
// (the values of Allow and Disallow lines), compiled as [Parse] compiles
// them: against [CanonicalPath] of a path they match as
// [Robots.MatchPath] matches the rule (but for its allowance of
// /robots.txt). An empty pattern matches no path that starts with "/".
// A pattern written as an earlier one is compiled once.
func NewPatternMatch(patterns []string) *FirstMatch {
	return &FirstMatch{m: index.NewPatternMatch(patterns)}
}

// MatchesEvery reports whether pattern number i (in the order given to
// [NewFirstMatch]) matches every path that starts with "/": its only
// literal is at most one leading "/" and it is not anchored ("/", "/*",
// "*"). It is how a caller tells that a rule covers a whole site.
func (f *FirstMatch) MatchesEvery(i int) bool {
	return f != nil && f.m.MatchesEvery(i)
}

// MatchesSome reports whether pattern number i can match some path that
// starts with "/" (its first literal is empty or starts with "/").
func (f *FirstMatch) MatchesSome(i int) bool {
	return f != nil && f.m.MatchesSome(i)
}

// CanonicalPath returns path (path, params and query, as sent) in the
// canonical form [Robots.MatchPath] matches, with "/" prepended when it
// does not start with one: the form the patterns of [NewPatternMatch]
// are matched against.
func CanonicalPath(path string) string { return index.CanonicalPath(path) }

// MemSize estimates the heap f holds, in bytes.
func (f *FirstMatch) MemSize() int64 {
	if f == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*f)) + f.m.MemSize()
}

// Index returns the number of the first pattern (in the order given to
// [NewFirstMatch]) that matches path, or -1 when none does.
func (f *FirstMatch) Index(path string) int {
	i, _ := f.IndexWork(path)
	return i
}

// IndexWork is Index with a count of the work it did: the octets of the
// path scanned or searched directly, the patterns considered and the
// segments looked up in the path's index. Tests bound it, where a clock
// would measure the machine.
func (f *FirstMatch) IndexWork(path string) (int, int) {
	if f == nil {
		return -1, 0
	}
	return f.m.IndexWork(path)
}

// AllWork appends to dst the numbers of all the patterns that match
// path, in the order given to [NewFirstMatch], with the count of work of
// [FirstMatch.IndexWork]. It costs what a decision that matches nothing
// costs: every pattern goes through the same filters and, past the
// direct budget, the same index of the path, never a search of the path
// per pattern.
func (f *FirstMatch) AllWork(path string, dst []int) ([]int, int) {
	if f == nil {
		return dst, 0
	}
	return f.m.AllWork(path, dst)
}
