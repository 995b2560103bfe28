package index

// What the tests of package robots see of the engine: how a file holds
// its rules, the bounds that decide it, the direct budget, and the work
// of a decision. Tests check the engine's choices and bound its work
// with them, where a clock would measure the machine.

// The bounds of the engine's choices, for tests that build files on
// either side of them.
const (
	IndexMin     = indexMin     // matchers above which a compiled part is indexed by octet
	SegFilterMin = segFilterMin // patterns with a key from which a file keeps a filter
	CompactWild  = compactWild  // wildcard rules above which a compact part is keyed or compiled
	PtableMin    = ptableMin    // records from which a compact part has a hash table
	DirectBudget = directBudget // octets searched directly before a path is indexed
	LazyKeyBytes = lazyKeyBytes // key octets up to which a keyed file builds its filter lazily
)

// Form is how a [File] holds its rules.
type Form struct {
	Indexed bool // its groups share an index: some part is compiled or keyed
	Lazy    bool // the index builds its filter only for a decision past the budget
	Filter  bool // the index has a filter of its wildcard patterns' keys
	Records int  // the records of its compact parts
	Canon   int  // the records matched from a canonical text (see [canonRec])
	Parts   []PartForm
}

// PartForm is how a part holds the rules of its group as written.
type PartForm struct {
	Compact  bool // records pointing into the text, not compiled matchers
	Keyed    bool // a compact part whose wildcard records have keys
	Table    bool // a compact part with a hash table of its plain records
	Matchers int  // the compiled matchers of a compiled part
}

// Form returns how r holds its rules.
func (r *File) Form() Form {
	f := Form{Indexed: r.idx != nil, Records: len(r.crs), Canon: r.numCanon(), Parts: make([]PartForm, len(r.parts))}
	if r.idx != nil {
		f.Lazy, f.Filter = r.idx.lazy, r.idx.segs != nil
	}
	for i := range r.parts {
		pt := &r.parts[i]
		pf := &f.Parts[i]
		pf.Compact, pf.Keyed = pt.compact(), pt.keyed()
		if pt.compact() {
			pf.Table = pt.partX != nil && pt.tab != nil
		} else {
			pf.Matchers = len(pt.matchers)
		}
	}
	return f
}

// SetBudget sets the octets a decision of r searches directly before it
// indexes its path (0: at once), and returns the budget it replaces. It
// is for tests, which must not run decisions of r meanwhile; a file
// without an index has no budget.
func (r *File) SetBudget(n int) int {
	if r.idx == nil {
		return 0
	}
	old := r.idx.budget
	r.idx.budget = n
	return old
}

// Keyed reports whether every path of ps has keys in its file's filter.
func (ps *Paths) Keyed() bool {
	for i := range ps.pt.matchers {
		if m := &ps.pt.matchers[i]; m.kto <= m.kfrom {
			return false
		}
	}
	return true
}

// MatchWork is [File.Match] with the work of the decision: the octets
// searched directly, the patterns and segments tried, a pass over the
// path for the filter's scan and for the index, and, for a decision
// that starts over with a filter built for it, a pass over the filter's
// keys.
func (r *File) MatchWork(gparts []uint32, p []byte) (Rule, bool, int) {
	return r.matchWork(r.idx, gparts, p)
}

// matchWork is MatchWork with the file index fi.
func (r *File) matchWork(fi *fileIndex, gparts []uint32, p []byte) (Rule, bool, int) {
	ps := pathSet{p: p, fi: fi}
	if fi != nil && fi.segs != nil {
		ps.found = make([]uint64, (fi.segs.nkeys+63)>>6)
	}
	lz := lazyIndex{fi: fi}
	rule, ok := r.matchWith(gparts, &ps, &lz)
	work := ps.work + ps.tried
	if ps.scanned {
		work += len(p)
	}
	if lz.ix != nil {
		work += len(p)
	}
	lz.release()
	if ps.over {
		x := fi.indexed(r)
		rule, ok, w := r.matchWork(x, gparts, p)
		return rule, ok, work + w + len(x.segs.label)
	}
	return rule, ok, work
}
