package robots

import (
	"bytes"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/heapsize"
	"github.com/robotsgate/robotsgate/robots/internal/index"
)

// usageRule is one Content-Usage or Content-Signal line as parsed.
type usageRule struct {
	path string // the path as written; "" when the line has none
	stmt usageStmt
	line *usageLine
}

// usageLines are the usage lines of one group as written (or the
// Content-Signal lines before the first group) and, once built, their
// compiled sets.
type usageLines struct {
	usage, signal []usageRule
	built         bool
	usageSet      *usageSet // nil when there are no Content-Usage lines
	signalSet     *usageSet // nil when there are no Content-Signal lines
}

// usageLine records a Content-Usage or Content-Signal line in the group
// being read. A Content-Signal line before the first user-agent line
// applies to every group; a Content-Usage line there, like an Allow or
// Disallow line, applies to none.
func (p *parser) usageLine(kind keyKind, num int, key, value []byte) {
	path, pref := splitUsageValue(value)
	ln := &usageLine{text: string(key) + ": " + string(value), line: num, src: ContentUsage}
	var prefs aipref.Prefs
	if kind == keyContentSignal {
		ln.src = ContentSignal
		prefs = aipref.ParseContentSignal(pref)
	} else {
		prefs = aipref.Parse(pref)
	}
	u := usageRule{path: path, stmt: newStmt(prefs, ln), line: ln}
	lines := &p.file
	if len(p.src) > 0 {
		g := &p.src[len(p.src)-1]
		if g.usage == 0 {
			p.usage = append(p.usage, usageLines{})
			g.usage = uint32(len(p.usage))
		}
		lines = &p.usage[g.usage-1]
	} else if kind == keyContentUsage {
		return
	}
	if kind == keyContentSignal {
		lines.signal = append(lines.signal, u)
	} else {
		lines.usage = append(lines.usage, u)
	}
}

// splitUsageValue splits the value of a usage line (already cut at '#'
// and trimmed) into its path and its statement of preference, as the
// attach draft says: a value starting with "/" has a path, which ends
// before the first SP or HTAB; the rest, white space removed, is the
// statement. A value starting otherwise has no path ("") and is all
// statement.
func splitUsageValue(v []byte) (path, pref string) {
	if len(v) == 0 || v[0] != '/' {
		return "", string(v)
	}
	i := bytes.IndexAny(v, " \t")
	if i < 0 {
		return string(v), ""
	}
	rest := v[i:]
	for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		rest = rest[1:]
	}
	return string(v[:i]), string(rest)
}

// sets compiles the lines once and returns their sets.
func (l *usageLines) sets() (usage, signal *usageSet) {
	if !l.built {
		l.usageSet, l.signalSet = newUsageSet(l.usage), newUsageSet(l.signal)
		l.usage, l.signal, l.built = nil, nil, true
	}
	return l.usageSet, l.signalSet
}

// groupUsage returns the usage preferences of the merge of the groups as
// written srcs (none: for agents no group applies to), or nil when no
// usage line concerns them.
func (p *parser) groupUsage(srcs []int) *usageGroup {
	if len(p.usage) == 0 && len(p.file.signal) == 0 && p.file.signalSet == nil {
		return nil // most files: nothing to build, nothing to allocate
	}
	_, file := p.file.sets()
	some := file != nil
	for _, i := range srcs {
		u, s := p.usageOf(i)
		some = some || u != nil || s != nil
	}
	if !some {
		return nil // most files: nothing to build, nothing to allocate
	}
	g := &usageGroup{}
	if file != nil {
		g.file = []*usageSet{file}
	}
	for _, i := range srcs {
		u, s := p.usageOf(i)
		if u != nil {
			g.usage = append(g.usage, u)
		}
		if s != nil {
			g.signals = append(g.signals, s)
		}
	}
	for _, sets := range [][]*usageSet{g.usage, g.signals, g.file} {
		for _, s := range sets {
			g.hasPaths = g.hasPaths || s.paths != nil
		}
	}
	g.signalFixed = true
	for _, s := range append(g.signals[:len(g.signals):len(g.signals)], g.file...) {
		g.signalFixed = g.signalFixed && s.paths == nil
	}
	if g.signalFixed {
		// No set has a path to match: neither the path nor an index
		// is consulted.
		g.signal = matchUsage(g.signals, nil, nil)
		g.signal.fallBack(matchUsage(g.file, nil, nil))
	}
	if g.signalFixed {
		var root usageStmt
		for _, s := range g.usage {
			root.add(&s.root)
		}
		g.fallBack(&root, &g.unmatched)
	}
	if !g.hasPaths {
		g.match(nil, nil, &g.fixed)
	}
	return g
}

// newUsageSet compiles the usage lines of one kind of one group, or
// returns nil when there are none. Lines with identical paths (the same
// compiled pattern and precedence, however spelled) are combined into one
// statement by the vocabulary's rule, so each distinct path is one rule
// of the set's part.
func newUsageSet(rules []usageRule) *usageSet {
	if len(rules) == 0 {
		return nil
	}
	s := &usageSet{}
	for i := range rules {
		s.lines += heapsize.Alloc(unsafe.Sizeof(*rules[i].line)) + heapsize.Alloc(uintptr(len(rules[i].line.text)))
	}
	var (
		paths  []index.Rule
		byPath = map[string]int{} // the key of each distinct path (index.PatternKey)
		key    []byte
	)
	for i := range rules {
		u := &rules[i]
		if u.path == "" {
			s.root.add(&u.stmt)
			continue
		}
		key = index.PatternKey(key[:0], u.path)
		if same, ok := byPath[string(key)]; ok {
			s.stmts[same].add(&u.stmt)
			continue
		}
		byPath[string(key)] = len(paths)
		paths = append(paths, index.Rule{Pattern: u.path, Line: u.line.line})
		s.stmts = append(s.stmts, u.stmt)
	}
	if len(paths) > 0 {
		s.paths = index.CompilePaths(paths)
	}
	return s
}

// usageOf returns the sets of the usage lines of group i as written.
func (p *parser) usageOf(i int) (usage, signal *usageSet) {
	if k := p.src[i].usage; k > 0 {
		return p.usage[k-1].sets()
	}
	return nil, nil
}

// usageSets returns the sets groupUsage built, each once.
func (p *parser) usageSets() []*usageSet {
	var out []*usageSet
	add := func(l *usageLines) {
		for _, s := range [2]*usageSet{l.usageSet, l.signalSet} {
			if s != nil {
				out = append(out, s)
			}
		}
	}
	add(&p.file)
	for i := range p.usage {
		add(&p.usage[i])
	}
	return out
}

// memSize returns what s holds: its compiled paths, statements and lines.
func (s *usageSet) memSize() int64 {
	n := heapsize.Alloc(unsafe.Sizeof(*s)) + heapsize.Slice(s.stmts) + s.lines
	n += s.paths.MemSize()
	return n
}

// memSize returns what g holds besides its sets, which groups share; 0
// for nil.
func (g *usageGroup) memSize() int64 {
	if g == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*g)) + heapsize.Slice(g.usage) + heapsize.Slice(g.signals) + heapsize.Slice(g.file)
}

// stmtRank orders a preference by restriction: disallowed, then unknown
// stated by a line (from), then allowed, then none stated.
func stmtRank(p aipref.Pref, from *usageLine) int {
	return StatementRank(UsageStatement{Pref: p, Source: sourceOf(from)})
}

// sourceOf is the source of ln, [UsageNone] for nil.
func sourceOf(ln *usageLine) UsageSource {
	if ln == nil {
		return UsageNone
	}
	return ln.src
}

// StatementRank orders usage statements by restriction, for combining
// them (the most restrictive wins): 3 disallowed, 2 unknown but stated by
// a source (a statement that names the purpose and cannot be read), 1
// allowed, 0 none stated.
func StatementRank(v UsageStatement) int {
	switch {
	case v.Pref == aipref.Disallowed:
		return 3
	case v.Pref == aipref.Unknown && v.Source != UsageNone:
		return 2
	case v.Pref == aipref.Allowed:
		return 1
	}
	return 0
}
