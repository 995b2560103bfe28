// Package robots implements the Robots Exclusion Protocol of RFC 9309:
// parsing a robots.txt body, selecting the group that applies to a crawler,
// and matching URL paths against that group's rules. It also reads the
// usage preferences a robots.txt states (Content-Usage and Content-Signal
// lines, in the vocabulary of package
// [github.com/robotsgate/robotsgate/robots/aipref]). Robot tags (the
// X-Robots-Tag header and <meta name="robots">) are package
// [github.com/robotsgate/robotsgate/robots/robottag]'s.
//
// The package does no I/O, reads no clock and logs nothing. A *Robots is
// immutable after Parse and safe for concurrent use.
//
// # Reading
//
// Parse is as lenient as Google's reference parser (github.com/google/robotstxt):
// lines end at CR, LF or CRLF; a UTF-8 byte order mark (or a prefix of one)
// is skipped at the start; '#' starts a comment anywhere; field names are
// matched case-insensitively by prefix, with Google's accepted misspellings
// ("dissallow", "useragent", "site-map", ...); a line without a colon that
// is exactly two words is read as "key value"; a line is cut after 16663
// bytes; invalid lines are ignored.
//
// # Groups
//
// The product token of a user-agent line is the leading run of
// [A-Za-z0-9_-] of its value ("Googlebot/2.1" gives "Googlebot"). An agent
// is compared whole and case-insensitively with these tokens. Groups naming
// the agent are merged for decisions and by [Robots.Group] ([Robots.Groups]
// lists them as written); only when none does, the groups naming "*"
// apply; without either, everything is allowed. A group naming the agent
// applies even when it has no rules. Crawl-delay (also spelled "crawl
// delay" or "crawldelay") is read per group, the largest value counting;
// an invalid one is kept as an Extension.
//
// # Matching
//
// The path, params and query of a URL are matched against the group's
// Allow and Disallow patterns, anchored at the start; '*' matches any run
// of octets and a final '$' the end. The longest pattern (in octets as
// written, non-ASCII octets counted percent-encoded) wins, Allow wins a
// tie, an empty pattern never matches, and /robots.txt is always allowed.
// Pattern and path are compared after the percent-encoding normalisation of
// RFC 9309 §2.2.2: escapes of unreserved characters are decoded ("%7E" and
// "~" are the same), and so are "%2A" and "%24", a literal '*' and '$'
// (Figure 6); escapes of reserved characters stay escaped, hex digits
// compared case-insensitively ("%2F" and "/" differ, "%2f" and "%2F" do
// not); octets a URI may not hold raw (non-ASCII, controls, space, '<',
// '|', ...) are percent-encoded ("é" and "%C3%A9" are the same). Matching
// allocates nothing for paths of up to 2 KiB and costs at most
// O(len(path)·len(pattern)) per rule.
package robots

import (
	"slices"
	"time"

	"github.com/robotsgate/robotsgate/robots/internal/index"
)

// DefaultMaxBytes is the number of bytes of a robots.txt body that Parse
// reads; RFC 9309 §2.5 asks crawlers to parse at least 500 KiB.
const DefaultMaxBytes = 500 << 10

// Robots is a parsed robots.txt file.
//
// The groups live in a few arrays per file, and refer to one another and
// to the text by index: the groups as written (written), their agents
// (agents), the merged groups (groups) and the groups as written each
// merges (gparts), which are also the numbers of their parts in the
// compiled rules (ix). A file has fewer than 2^32 user-agent lines, so
// uint32 indexes suffice.
type Robots struct {
	text       string      // the body parsed; the strings below share it
	ix         *index.File // the rules of the groups as written, compiled
	written    []written   // the groups as written that name an agent, in file order
	agents     []span      // the agents of written, group by group
	groups     []merged    // merged groups, in order of first appearance
	gparts     []uint32    // the indexes into written of each merged group's parts
	byAgent    []entry     // sorted by product token compared case-insensitively (foldCompare)
	sitemaps   []string
	extensions []Extension
	usage      *usageGroup // usage preferences for agents no group applies to; nil when none
	size       int64       // MemSize
	stats      parseStats
	global     uint32 // 1 + the index into groups of the merged "*" group; 0 when none
	// licensesCut says the file has more License lines than it keeps.
	licensesCut bool

	// licenses are the License lines (license.go).
	licenses []licenseLine
}

// globalGroup returns the merged "*" group of r, or nil.
func (r *Robots) globalGroup() *merged {
	if r.global == 0 {
		return nil
	}
	return &r.groups[r.global-1]
}

// span is a product token of a user-agent line, text[off:off+n] with off
// in its high 48 bits and n (at most [maxLineLen]) in its low 16; 0 stands
// for "*".
type span uint64

// newSpan returns the span of the n octets at off.
func newSpan(off, n int) span { return span(uint64(off)<<16 | uint64(n)) }

// str returns the agent s names.
func (r *Robots) str(s span) string {
	if s == 0 {
		return "*"
	}
	return r.text[s>>16:][:s&0xffff]
}

// entry is a product token of a user-agent line as written and the index
// into [Robots.groups] of the merged group it selects.
type entry struct {
	token span
	group uint32
}

// written is one group as written in the file; its rules are part
// number i of [Robots.ix], i its index into [Robots.written].
type written struct {
	agents [2]uint32 // Robots.agents[agents[0]:agents[1]]: tokens and "*" as written, duplicates removed
	delay  time.Duration
}

// merged is the union of the groups as written that name one agent (or
// "*"). It shares their parts: merging never copies a rule, so a file in
// which thousands of agents each name a different combination of large
// groups stays linear.
type merged struct {
	from, to uint32      // its groups as written are Robots.gparts[from:to], in file order
	usage    *usageGroup // usage preferences of its parts; nil when none
}

// parts returns the indexes into r.written of g's parts.
func (r *Robots) parts(g *merged) []uint32 { return r.gparts[g.from:g.to] }

// delay returns the Crawl-delay of g: the largest of its parts'.
func (r *Robots) delay(g *merged) time.Duration {
	var d time.Duration
	for _, w := range r.parts(g) {
		d = max(d, r.written[w].delay)
	}
	return d
}

// agentsOf returns the agents of the group as written w.
func (r *Robots) agentsOf(w *written) []string {
	as := r.agents[w.agents[0]:w.agents[1]]
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = r.str(a)
	}
	return out
}

// mergedAgents returns the agents that select g: the tokens, as first
// written, in order of first appearance, then "*" for the global group.
func (r *Robots) mergedAgents(g *merged) []string {
	var gi uint32
	for i := range r.groups {
		if &r.groups[i] == g {
			gi = uint32(i)
		}
	}
	var toks []span
	for _, e := range r.byAgent {
		if e.group == gi {
			toks = append(toks, e.token)
		}
	}
	// A token's first spelling is where it first appears.
	slices.Sort(toks)
	out := make([]string, 0, len(toks)+1)
	for _, t := range toks {
		out = append(out, r.str(t))
	}
	if g == r.globalGroup() {
		out = append(out, "*")
	}
	return out
}

// Rule is one Allow or Disallow line of a group.
type Rule struct {
	Allow   bool   // true for Allow, false for Disallow
	Pattern string // the value as written in the file (trimmed, comment removed)
	Line    int    // 1-based line number in the file
}

// String formats r as it would appear in a robots.txt file,
// for example "Disallow: /private".
func (r Rule) String() string {
	if r.Allow {
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// Group is the set of rules that apply to one or more user agents: either
// one group as written ([Robots.Groups]) or the merge of all groups naming
// one agent ([Robots.Group]). A Group is a copy: changing it changes nothing
// in the Robots it came from.
type Group struct {
	// Agents are the product tokens, as first written, that select this
	// group, and "*" for the default group: for a group as written, those
	// of its own user-agent lines in file order (repetitions removed); for
	// a merged group, the agents that select exactly the same groups.
	Agents []string
	// Rules are the Allow and Disallow lines of the group, in file order.
	Rules []Rule
	// CrawlDelay is the Crawl-delay of the group (decimal seconds), the
	// largest when it states several; 0 when it states none, or only
	// invalid values. It never changes a Match.
	CrawlDelay time.Duration
}

// group returns a copy of m as a Group, its rules concatenated.
func (r *Robots) group(m *merged) *Group {
	return &Group{Agents: r.mergedAgents(m), Rules: r.rules(nil, r.parts(m)), CrawlDelay: r.delay(m)}
}

// rules appends to dst the rules of the parts gparts, in order and each
// in file order.
func (r *Robots) rules(dst []Rule, gparts []uint32) []Rule {
	n := 0
	for _, k := range gparts {
		n += r.ix.NumRules(k)
	}
	dst = slices.Grow(dst, n)
	for _, rl := range r.ix.AppendRules(make([]index.Rule, 0, n), gparts) {
		dst = append(dst, Rule(rl))
	}
	return dst
}

// Match is the outcome of matching a URL against a robots.txt.
type Match struct {
	// Allowed reports whether the URL may be fetched.
	Allowed bool
	// Rule is the rule that decided; its Line is 0 when no rule matched
	// (or the decision came from an implicit rule such as /robots.txt).
	Rule Rule
	// Group is the agent token of the group that applied ("*" for the
	// default group), or "" when no group applied.
	Group string
}

// Extension is a line with a field robots doesn't act on (Host,
// Request-rate, Clean-param, ...), kept for display.
type Extension struct {
	Key   string // the field name as written
	Value string // the value, trimmed, comment removed
	Line  int    // 1-based line number in the file
}

// Parse parses a robots.txt body, reading at most [DefaultMaxBytes] of it.
// It never fails: invalid lines are ignored.
func Parse(body []byte) *Robots { return ParseLimit(body, DefaultMaxBytes) }

// ParseLimit is like Parse but reads at most maxBytes of body; bytes past
// the limit are ignored. A maxBytes <= 0 means [DefaultMaxBytes].
//
// When the limit falls inside a line, that incomplete last line is ignored
// too, so a cut-off rule never applies with a shortened pattern.
func ParseLimit(body []byte, maxBytes int) *Robots {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if len(body) > maxBytes {
		body = cutAtLineEnd(body, maxBytes)
	}
	return parse(body)
}

// Match reports whether rawURL may be fetched by the crawler whose product
// token is agent. Only the path, params and query of rawURL are matched
// (see [PathParamsQuery]). rawURL is normally percent-encoded, as sent on the
// wire; raw octets a URI may not hold are percent-encoded before matching.
//
// agent is compared whole and case-insensitively with the product token
// of each user-agent line; no token is extracted from it (use [ProductToken]
// on a full User-Agent header first). The path /robots.txt is always
// allowed (RFC 9309 §2.2.2).
//
// Match allocates nothing when the agent has at most 64 bytes and the
// path, params and query need no normalisation or, once normalised (see
// the package documentation), have at most 2 KiB; beyond either bound it
// allocates. Each
// rule tried costs at most O(len(path)·len(pattern)); rules are tried in
// precedence order until one matches, identical rules are tried once,
// and a rule with a wildcard and an octet the path lacks is skipped
// without searching the path.
func (r *Robots) Match(agent, rawURL string) Match {
	p, slash := pathParamsQuery(rawURL)
	return r.matchAgentPath(agent, p, slash)
}

// MatchPath is like Match for an already extracted path[;params][?query]
// (as returned by [PathParamsQuery]). A path not starting with "/" is
// matched as if it did.
func (r *Robots) MatchPath(agent, path string) Match {
	return r.matchAgentPath(agent, path, len(path) == 0 || path[0] != '/')
}

// Group returns the group that applies to agent: the merge of the groups
// naming it (RFC 9309 §2.2.1), else of the groups naming "*", else nil.
// Its Agents are the tokens that select exactly the same groups as agent.
//
// The result is built afresh on each call: it costs time and memory in
// proportion to the number of rules of the merged groups, which for a
// large file can be most of its rules. Match, AllowsNothing and
// CrawlDelay never build it; use them on hot paths.
func (r *Robots) Group(agent string) *Group {
	m, _ := r.lookup(agent)
	if m == nil {
		return nil
	}
	return r.group(m)
}

// CrawlDelay returns the Crawl-delay that applies to agent: the largest
// stated by the groups Group(agent) merges, or 0. It allocates nothing.
func (r *Robots) CrawlDelay(agent string) time.Duration {
	m, _ := r.lookup(agent)
	if m == nil {
		return 0
	}
	return r.delay(m)
}

// Groups returns the groups as written, in file order, each with the
// agents of its own user-agent lines, its own rules and its own
// Crawl-delay. Groups naming the same agent are NOT merged here; only
// Group(agent) and the decisions merge them. A group whose user-agent
// lines yield no product token applies to no crawler and is left out.
//
// The result is a copy, linear in the size of the file.
func (r *Robots) Groups() []*Group {
	if r == nil || len(r.written) == 0 {
		return nil
	}
	all := make([]uint32, len(r.written))
	for i := range all {
		all[i] = uint32(i)
	}
	// One backing array for all rules, so the copy costs a few allocations.
	rules := r.rules(nil, all)
	gs := make([]*Group, len(r.written))
	for i := range r.written {
		w := &r.written[i]
		n := r.ix.NumRules(uint32(i))
		gs[i] = &Group{Agents: r.agentsOf(w), Rules: rules[:n:n], CrawlDelay: w.delay}
		rules = rules[n:]
	}
	return gs
}

// Sitemaps returns the values of all Sitemap lines, in file order.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.sitemaps...)
}

// Extensions returns the lines with unknown fields, in file order.
func (r *Robots) Extensions() []Extension {
	if r == nil {
		return nil
	}
	return append([]Extension(nil), r.extensions...)
}

// AllowsNothing reports whether the group for agent disallows every path
// (so a whole site is closed to it), e.g. "Disallow: /" with no Allow.
//
// It is conservative: it reports true only when a Disallow rule matches
// every possible path and no Allow rule that could match any path has the
// same or a higher precedence. The implicitly allowed /robots.txt is not
// counted.
func (r *Robots) AllowsNothing(agent string) bool {
	m, _ := r.lookup(agent)
	if m == nil {
		return false
	}
	return r.ix.AllowsNothing(r.parts(m))
}
