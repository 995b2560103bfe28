// Package robots implements the Robots Exclusion Protocol of RFC 9309:
// parsing a robots.txt body, selecting the group that applies to a crawler,
// and matching URL paths against that group's rules. It also parses robot
// tags (the X-Robots-Tag header and <meta name="robots">).
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
// the agent are merged; only when none does, the groups naming "*" apply;
// without either, everything is allowed. A group naming the agent applies
// even when it has no rules.
//
// # Matching
//
// The path, params and query of a URL are matched against the group's
// Allow and Disallow patterns, anchored at the start; '*' matches any run
// of octets and a final '$' the end. The longest pattern (in octets as
// written, non-ASCII octets counted percent-encoded) wins, Allow wins a
// tie, an empty pattern never matches, and /robots.txt is always allowed.
// Pattern and path are compared after the percent-encoding normalisation of
// RFC 9309 §2.2.2: non-ASCII octets are encoded, and every escape of a
// printable ASCII character is decoded (so "%7E" and "~", "%2F" and "/"
// are the same, and "%2A" in a pattern is a literal '*'). Matching
// allocates nothing for paths of up to 2 KiB and costs at most
// O(len(path)·len(pattern)) per rule.
package robots

import (
	"sync"
	"time"
)

// DefaultMaxBytes is the number of bytes of a robots.txt body that Parse
// reads; RFC 9309 §2.5 asks crawlers to parse at least 500 KiB.
const DefaultMaxBytes = 500 << 10

// Robots is a parsed robots.txt file.
type Robots struct {
	groups     []*Group         // merged groups, in order of first appearance
	byAgent    map[string]entry // lower-cased product token -> its group
	global     *Group           // the merged "*" group, or nil
	sitemaps   []string
	extensions []Extension
	stats      parseStats
}

// entry is a product token of a user-agent line as written and the merged
// group it selects.
type entry struct {
	token string
	group *Group
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

// Group is the set of rules that apply to one or more user agents. Groups
// naming the same agent are merged (RFC 9309 §2.2.1).
type Group struct {
	// Agents are the product tokens (as first written) that select this
	// group; "*" for the default group. Tokens whose user-agent lines
	// head exactly the same groups in the file share one Group.
	Agents []string
	// Rules are the Allow and Disallow lines of the merged groups, in file
	// order.
	Rules []Rule
	// CrawlDelay is the Crawl-delay of the group (decimal seconds), the
	// largest when merged groups state several; 0 when the group states
	// none, or only invalid values. It never changes a Decision.
	CrawlDelay time.Duration

	// parts are the groups as written that this one merges, in file order,
	// each with its rules compiled. Decisions are made on the parts, so
	// that merging never copies rules: a file in which thousands of agents
	// each name a different combination of large groups stays linear.
	parts []*part
	// fill, when not nil, fills in Rules from parts on first use (by
	// Robots.Group or Robots.Groups); it is nil when Rules is already set.
	fill *sync.Once
}

// filled fills in g.Rules if needed and returns g.
func (g *Group) filled() *Group {
	if g != nil && g.fill != nil {
		g.fill.Do(func() {
			n := 0
			for _, pt := range g.parts {
				n += len(pt.rules)
			}
			rules := make([]Rule, 0, n)
			for _, pt := range g.parts {
				rules = append(rules, pt.rules...)
			}
			g.Rules = rules
		})
	}
	return g
}

// Decision is the outcome of matching a URL against a robots.txt.
type Decision struct {
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

// Parse parses a robots.txt body, reading at most DefaultMaxBytes of it.
// It never fails: invalid lines are ignored.
func Parse(body []byte) *Robots { return ParseLimit(body, DefaultMaxBytes) }

// ParseLimit is like Parse but reads at most maxBytes of body; bytes past
// the limit are ignored. A maxBytes <= 0 means DefaultMaxBytes.
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

// Decide reports whether rawURL may be fetched by the crawler whose product
// token is agent. Only the path, params and query of rawURL are matched
// (see PathParamsQuery). rawURL is normally percent-encoded, as sent on the
// wire; raw non-ASCII octets are percent-encoded before matching.
//
// agent is compared whole and case-insensitively with the product token
// of each user-agent line; no token is extracted from it (use ProductToken
// on a full User-Agent header first). The path /robots.txt is always
// allowed (RFC 9309 §2.2.2).
func (r *Robots) Decide(agent, rawURL string) Decision {
	p, slash := pathParamsQuery(rawURL)
	return r.decide(agent, p, slash)
}

// DecidePath is like Decide for an already extracted path[;params][?query]
// (as returned by PathParamsQuery). A path not starting with "/" is
// matched as if it did.
func (r *Robots) DecidePath(agent, path string) Decision {
	return r.decide(agent, path, len(path) == 0 || path[0] != '/')
}

// Group returns the group that applies to agent: the merged groups naming
// it, else the "*" group, else nil. The returned group is shared and must
// not be modified.
func (r *Robots) Group(agent string) *Group {
	g, _ := r.lookup(agent)
	return g.filled()
}

// Groups returns all groups, merged, in order of first appearance. Agents
// whose user-agent lines head exactly the same groups in the file share
// one Group. The groups are shared and must not be modified.
//
// The merged rule lists are built on first use; for a file crafted so that
// many agents each name a different combination of large groups they can
// be much larger than the file (Decide never builds them).
func (r *Robots) Groups() []*Group {
	if r == nil {
		return nil
	}
	gs := make([]*Group, len(r.groups))
	for i, g := range r.groups {
		gs[i] = g.filled()
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
	g, _ := r.lookup(agent)
	if g == nil {
		return false
	}
	return g.allowsNothing()
}
