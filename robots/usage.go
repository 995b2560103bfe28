package robots

// Usage preferences in robots.txt: what a site says fetched content may be
// used for (AI training, search, AI input), beyond which paths may be
// fetched. Two kinds of line state them:
//
//   - Content-Usage (draft-ietf-aipref-attach): "Content-Usage: [path]
//     prefs" inside a group, prefs in the vocabulary's syntax
//     ("train-ai=n"). The path is optional; written, it starts with "/"
//     and ends at the first SP or HTAB. Paths are matched like Allow and
//     Disallow patterns (same compiler and matcher: percent-encoding,
//     '*', final '$', precedence by length in octets); the longest
//     matching path decides, a line without a path matching every path
//     with precedence 0. Rule order carries no meaning: lines with
//     identical paths, and different paths of the same precedence that
//     all match, are combined by the vocabulary's rule (any disallow
//     wins, then any allow).
//   - Content-Signal (Content Signals): "Content-Signal: search=yes,
//     ai-train=no" inside a group, or before the first user-agent line,
//     where it applies to every group and to agents no group applies to.
//     Its value may start with a path, read and matched as for
//     Content-Usage.
//
// For each purpose the preference is the one stated by the group's
// Content-Usage lines, else (unknown there) by the group's Content-Signal
// lines, else by the file's Content-Signal lines, else unknown
// ([Usage.For]); the Content-Signal verdict alone is kept too
// ([Usage.Signal]), so that a caller can hold a crawler to both kinds of
// line. The content-use level ("use=" of Content-Signal) is the group's,
// else the file's ([Usage.Use]). A group merged from several groups as
// written (one agent named in several) matches the lines of all of them
// together.
//
// Usage lines never change an Allow/Disallow verdict. They do not end a
// run of user-agent lines either (Google's parser, whose crawl verdicts
// this package follows, ends a run only at Allow/Disallow), so in
// "User-agent: a / Content-Usage: train-ai=n / User-agent: b / Disallow: /"
// the Content-Usage line applies to a and b alike, as does the Disallow.
// A disallowed URL has no usage preference (attach draft).

import (
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/internal/index"
)

// UsageSource is the kind of robots.txt line a usage preference comes from.
type UsageSource uint8

// The sources of a usage preference in robots.txt.
const (
	UsageNone     UsageSource = iota // no line stated one
	ContentUsage                     // a Content-Usage line
	ContentSignal                    // a Content-Signal line
)

// String returns "", "content-usage" or "content-signal".
func (s UsageSource) String() string {
	switch s {
	case ContentUsage:
		return "content-usage"
	case ContentSignal:
		return "content-signal"
	}
	return ""
}

// UsageStatement is the usage preference robots.txt states for one purpose
// on one URL.
//
// A Pref unknown with a Source is stated: the line names the purpose but
// its preference cannot be read ("Content-Signal: ai-train=no;"). It is
// not completed from another line, and binds as unknown preferences do
// (usage.unknown).
type UsageStatement struct {
	Pref   aipref.Pref
	Source UsageSource // UsageNone when no line states a preference
	// Rule is the deciding line as written, for example
	// "Content-Usage: /ai-ok/ train-ai=y" (comment and surrounding white
	// space removed); "" when no line states one. When several lines
	// combine, it is the first that states the winning preference.
	Rule string
	Line int // the 1-based line number of Rule; 0 when none
}

// UseVerdict is the content-use level robots.txt states for one URL: a
// [UsageStatement] with a level ([aipref.Use]) for a preference.
type UseVerdict struct {
	Level  aipref.Use
	Source UsageSource // UsageNone when Level is unknown
	Rule   string      // the deciding line as written; "" when none
	Line   int         // its 1-based line number; 0 when none
}

// Usage is the usage preferences robots.txt states for one URL, one
// verdict per purpose, and its content-use level. The zero value states
// none.
type Usage struct {
	v   [aipref.NumPurposes]UsageStatement
	sig [aipref.NumPurposes]UsageStatement // Content-Signal lines alone
	use UseVerdict
}

// For returns the verdict for purpose p.
func (u *Usage) For(p aipref.Purpose) UsageStatement {
	if int(p) < aipref.NumPurposes {
		return u.v[p]
	}
	return UsageStatement{}
}

// Signal returns the verdict of the Content-Signal lines alone for
// purpose p (the group's, else the file's), whatever Content-Usage lines
// state.
func (u *Usage) Signal(p aipref.Purpose) UsageStatement {
	if int(p) < aipref.NumPurposes {
		return u.sig[p]
	}
	return UsageStatement{}
}

// Use returns the content-use level (Content-Signal "use=").
func (u *Usage) Use() UseVerdict { return u.use }

// Prefs returns the preferences of u (For) and its content-use level,
// without their sources.
func (u *Usage) Prefs() aipref.Prefs {
	var ps aipref.Prefs
	for i := range u.v {
		ps = ps.With(aipref.Purpose(i), u.v[i].Pref)
	}
	return ps.WithUse(u.use.Level)
}

// MatchUsage is MatchPath plus the usage preferences robots.txt states
// for path: the Match is the one MatchPath returns, and the Usage is
// empty when that Match disallows the path. It allocates nothing under
// the bounds Match documents, and shares the path's normalisation, the
// group lookup, and the path's octet set, filter scan and index with the
// decision. Usage paths are filtered and indexed with the file's
// Allow/Disallow patterns, so each kind of usage line costs at most one
// matching of the group's distinct usage paths, bounded as for rules.
func (r *Robots) MatchUsage(agent, path string) (d Match, u Usage) {
	return r.matchWithUsage(agent, path, false)
}

// MatchUsageRules is MatchUsage without the implicit allowance of
// /robots.txt (RFC 9309 §2.2.2): a path that reads as /robots.txt is
// decided by the group's rules like any other. It is for a caller that
// exempts the requests for robots.txt itself on its own, narrower terms.
func (r *Robots) MatchUsageRules(agent, path string) (d Match, u Usage) {
	return r.matchWithUsage(agent, path, true)
}

// matchWithUsage is MatchUsage, or MatchUsageRules when rulesOnly is set.
// The rules and the usage paths share one [index.Search], so the path is
// scanned and indexed at most once, and the direct searches of both
// count against one budget.
func (r *Robots) matchWithUsage(agent, path string, rulesOnly bool) (d Match, u Usage) {
	g, tok := r.lookup(agent)
	var ug *usageGroup
	var ix *index.File
	if r != nil {
		ug, ix = r.usage, r.ix
	}
	if g != nil {
		ug = g.usage
	}
	slash := len(path) == 0 || path[0] != '/'
	var buf [index.StackPath]byte
	s, sc := ix.Begin(index.CanonPath(&buf, path, slash))
	r.lookupUsage(g, tok, ug, &s, &sc, rulesOnly, &d, &u)
	if s.Restart(&sc) {
		d, u = Match{}, Usage{}
		r.lookupUsage(g, tok, ug, &s, &sc, rulesOnly, &d, &u)
	}
	sc.End() // matching does not panic: no defer on the hot path
	return d, u
}

// lookupUsage sets *d and *u for the group g of r selected by tok and its
// usage ug, by the search s (with its scratch sc) of the canonical path; *d is the Match
// matchAgentPath returns, but for /robots.txt when rulesOnly is set.
func (r *Robots) lookupUsage(g *merged, tok string, ug *usageGroup, s *index.Search, sc *index.Scratch, rulesOnly bool, d *Match, u *Usage) {
	switch {
	case !rulesOnly && string(s.Path()) == "/robots.txt":
		*d = Match{Allowed: true, Rule: Rule{Allow: true, Pattern: "/robots.txt"}, Group: tok}
	case g == nil:
		*d = Match{Allowed: true}
	default:
		*d = Match{Allowed: true, Group: tok}
		if rule, ok := s.Match(sc, r.parts(g)); ok {
			*d = Match{Allowed: rule.Allow, Rule: Rule(rule), Group: tok}
		}
	}
	if d.Allowed && ug != nil {
		ug.lookup(s, sc, u)
	}
}

// usageLine is one Content-Usage or Content-Signal line.
type usageLine struct {
	text string // "Content-Usage: /ai-ok/ train-ai=y"
	line int
	src  UsageSource
}

// usageStmt is a statement of preference with, for each purpose it knows,
// the line its preference comes from, and its content-use level with its
// line.
type usageStmt struct {
	pref    [aipref.NumPurposes]aipref.Pref
	from    [aipref.NumPurposes]*usageLine
	use     aipref.Use
	useFrom *usageLine
}

// A purpose the line names without a readable preference
// ([aipref.Prefs.Unparsed]) is stated unknown: it comes from the line
// too, so that it is not completed from another line.
func newStmt(prefs aipref.Prefs, ln *usageLine) usageStmt {
	var s usageStmt
	for i := range s.from {
		p := aipref.Purpose(i)
		if s.pref[i] = prefs.Get(p); s.pref[i] != aipref.Unknown || prefs.Unparsed().Has(p) {
			s.from[i] = ln
		}
	}
	if s.use = prefs.Use(); s.use != aipref.UseUnknown {
		s.useFrom = ln
	}
	return s
}

// add combines o into s by the vocabulary's rule, an unknown that a line
// states ranking between disallowed and allowed ([stmtRank]; content-use
// levels: the lower wins); a line already deciding a purpose keeps
// deciding it unless o's preference is more restrictive.
func (s *usageStmt) add(o *usageStmt) {
	for i := range s.pref {
		if stmtRank(o.pref[i], o.from[i]) > stmtRank(s.pref[i], s.from[i]) {
			s.pref[i], s.from[i] = o.pref[i], o.from[i]
		}
	}
	if c := aipref.CombineUse(s.use, o.use); c != s.use {
		s.use, s.useFrom = c, o.useFrom
	}
}

// usageSet is the usage lines of one kind of one group as written (or the
// file's Content-Signal lines).
type usageSet struct {
	paths *index.Paths // one rule per distinct path; nil when no line has a path
	stmts []usageStmt  // the combined statement of each rule of paths
	root  usageStmt    // the lines without a path, combined
	lines int64        // what its usageLines hold (see MemSize)
}

// usageGroup is the usage lines that apply to one merged group.
type usageGroup struct {
	usage   []*usageSet // Content-Usage of its groups as written
	signals []*usageSet // Content-Signal of its groups as written
	file    []*usageSet // Content-Signal before the first group: none or one
	// fixed is the usage of every path when no set has a path.
	fixed    Usage
	hasPaths bool
	// signal is the Content-Signal statement of every path (the group's,
	// else the file's) when no Content-Signal line has a path.
	signal      usageStmt
	signalFixed bool
	// unmatched is the usage of a path no Content-Usage path matches,
	// when signalFixed.
	unmatched Usage
}

// lookup sets *u, zero on entry, to the usage for the canonical path
// ps.p.
func (g *usageGroup) lookup(s *index.Search, sc *index.Scratch, u *Usage) {
	if !g.hasPaths {
		*u = g.fixed
		return
	}
	g.match(s, sc, u)
}

// match is lookup without the shortcut for groups without paths.
func (g *usageGroup) match(s *index.Search, sc *index.Scratch, u *Usage) {
	if g.signalFixed {
		if cu, ok := matchPaths(g.usage, s, sc); ok {
			g.fallBack(&cu, u)
		} else {
			*u = g.unmatched
		}
		return
	}
	cu := matchUsage(g.usage, s, sc)
	cs := matchUsage(g.signals, s, sc)
	cs.fallBack(matchUsage(g.file, s, sc))
	cs.fillSignal(u)
	cu.fallBack(cs)
	cu.fill(u)
}

// fallBack sets *u to cu, completed by g.signal, which must be fixed.
func (g *usageGroup) fallBack(cu *usageStmt, u *Usage) {
	g.signal.fillSignal(u)
	for i := range u.v {
		s := cu
		if s.from[i] == nil {
			s = &g.signal
		}
		if ln := s.from[i]; ln != nil {
			u.v[i] = UsageStatement{Pref: s.pref[i], Source: ln.src, Rule: ln.text, Line: ln.line}
		}
	}
}

// fill sets the verdicts of u that s states.
func (s *usageStmt) fill(u *Usage) {
	for i := range u.v {
		if ln := s.from[i]; ln != nil {
			u.v[i] = UsageStatement{Pref: s.pref[i], Source: ln.src, Rule: ln.text, Line: ln.line}
		}
	}
}

// fillSignal sets the Content-Signal verdicts and the content-use level
// of u to those s, a Content-Signal statement, states.
func (s *usageStmt) fillSignal(u *Usage) {
	for i := range u.sig {
		if ln := s.from[i]; ln != nil {
			u.sig[i] = UsageStatement{Pref: s.pref[i], Source: ln.src, Rule: ln.text, Line: ln.line}
		}
	}
	if ln := s.useFrom; ln != nil {
		u.use = UseVerdict{Level: s.use, Source: ln.src, Rule: ln.text, Line: ln.line}
	}
}

// fallBack gives s the preferences of o for the purposes s leaves
// unknown, and o's content-use level when s states none.
func (s *usageStmt) fallBack(o usageStmt) {
	for i := range s.from {
		if s.from[i] == nil {
			s.pref[i], s.from[i] = o.pref[i], o.from[i]
		}
	}
	if s.useFrom == nil {
		s.use, s.useFrom = o.use, o.useFrom
	}
}

// matchUsage returns the combined statement of the longest paths of sets
// that match the path of s, or of their lines without a path when none
// does.
func matchUsage(sets []*usageSet, s *index.Search, sc *index.Scratch) usageStmt {
	acc, ok := matchPaths(sets, s, sc)
	if ok {
		return acc
	}
	if len(sets) == 1 {
		return sets[0].root
	}
	for _, set := range sets {
		acc.add(&set.root)
	}
	return acc
}

// matchPaths returns the combined statement of the longest paths of sets
// that match the path of s, and whether there is one: every path of that
// precedence that matches counts.
func matchPaths(sets []*usageSet, s *index.Search, sc *index.Scratch) (usageStmt, bool) {
	best := -1
	var acc usageStmt
	for _, set := range sets {
		if set.paths == nil {
			continue
		}
		s.Longest(sc, set.paths, best, func(prio, rule int) {
			if prio > best {
				best, acc = prio, usageStmt{}
			}
			acc.add(&set.stmts[rule])
		})
	}
	return acc, best >= 0
}
