// Package index is the matching engine behind package robots: it holds
// the Allow and Disallow rules of a robots.txt file in forms that answer
// the longest-match rule of RFC 9309 quickly and within a bounded cost,
// whatever the file.
//
// Package robots reads a file and decides what its lines mean; this
// package only answers, for a group (a list of the file's groups as
// written) and a canonical path, which rule of highest precedence
// matches. Its answers are those of a plain reading of the rule
// (robots' reference matcher, which a fuzz test holds it to): the
// longest pattern wins, Allow wins a tie, else the earlier rule; '*'
// matches any run of octets and a final '$' the end of the path.
//
// A small group keeps its rules as records pointing into the file's text
// (a compact part), a large or costly one has them compiled into
// matchers, narrowed by the path's second octet, an octet filter and an
// automaton over the literal segments of its wildcard patterns, and
// searched, past a budget, in an index of the path's occurrences, so
// that no file makes a decision search the path once per rule.
//
// The API:
//   - [NewBuilder], [Builder.AddRule], [Builder.Group], [Builder.Parts],
//     [Builder.CompileLarge] and [Builder.Finish] compile a file's rules;
//   - [File.Match] finds the longest match of a group for a path,
//     [File.AppendRules] lists a group's rules, [File.AllowsNothing]
//     tells whether a group closes the whole site;
//   - [File.Form], [File.SetBudget] and [File.MatchWork] show the tests
//     of package robots how a file holds its rules and what a decision
//     costs;
//   - [CompilePaths], [Search] and [Scratch] match the paths of other
//     lines (the usage lines) with the same engine, sharing what a
//     decision learnt about its path;
//   - [FirstMatch] matches a list of patterns in which the first wins;
//   - [CanonPath] and [CanonicalPath] put a path in the canonical
//     percent-encoding patterns are compared in.
package index

import "strings"

// Rule is one Allow or Disallow line of a group, as package robots
// reports it.
type Rule struct {
	Allow   bool   // true for Allow, false for Disallow
	Pattern string // the value as written in the file (trimmed, comment removed)
	Line    int    // 1-based line number in the file
}

// File is the compiled rules of one robots.txt file. It is immutable
// once built and safe for concurrent use. Its parts, one per group as
// written that names an agent, are numbered in file order.
type File struct {
	text  string      // the text parsed; the rules' patterns are slices of it
	crs   []crule     // the records of the compact parts, part by part
	cx    *canonTable // the records of crs matched from a canonical text; nil when none
	parts []part      // the part of each group as written that names an agent
	lines []uint32    // line checkpoints of a long text (see [File.lineAt])
	idx   *fileIndex  // shared by the decisions of all groups; nil when all parts are compact
	cr    bool        // the text has a CR (see [File.lineAt])
}

// Builder compiles the rules of one text into a [File].
type Builder struct {
	r        *File
	text     string
	compiled bool    // compile every part
	sc       matcher // scratch of the compiled patterns of compact parts
	cbuf     []byte  // the canonical texts of compact records (see [canonRec])
	rules    []srcRule
	wide     []int       // the offsets and lines of rules when the text is too long for srcRule
	ranges   [][2]uint32 // the rules of each group as written
	named    []bool      // whether each group as written names an agent
	parts    []*part     // the part of each group as written; nil for one naming no agent
}

// NewBuilder returns a builder of the rules of text, whose patterns are
// slices of it. With compiled set, every part is compiled rather than
// kept compact (tests compare both forms).
func NewBuilder(text string, compiled bool) *Builder {
	p := &Builder{r: &File{text: text}, text: text, compiled: compiled}
	p.presize(text)
	return p
}

// Finish completes the file: its side table of canonical texts, its line
// checkpoints, and the index all its groups share, over the file's parts
// and the paths of its usage lines, which are filtered and indexed with
// them. The builder is not used again.
func (p *Builder) Finish(paths []*Paths) *File {
	p.finishCanon()
	r := p.r
	if len(r.crs) > 0 {
		r.lines = lineTable(p.text)
		r.cr = strings.IndexByte(p.text, '\r') >= 0
	}
	r.index(p.parts, paths)
	return r
}

// NumRules returns the number of rules of part k of r.
func (r *File) NumRules(k uint32) int { return r.parts[k].numRules(r) }

// AppendRules appends the rules of the parts gparts of r, in order and
// each in file order, to dst.
func (r *File) AppendRules(dst []Rule, gparts []uint32) []Rule {
	lc := lineCursor{r: r}
	for _, k := range gparts {
		dst = r.parts[k].appendRules(r, dst, &lc)
	}
	return dst
}
