// Package robots implements the Robots Exclusion Protocol of RFC 9309:
// parsing a robots.txt body, selecting the group that applies to a crawler,
// and matching URL paths against that group's rules. It also parses robot
// tags (the X-Robots-Tag header and <meta name="robots">).
//
// The package does no I/O, reads no clock and logs nothing. A *Robots is
// immutable after Parse and safe for concurrent use.
package robots

import "time"

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
	Agents     []string      // the product tokens of the group's user-agent lines; "*" for the default group
	Rules      []Rule        // in file order
	CrawlDelay time.Duration // 0 when the group states none (or only invalid values)

	// matchers are the group's non-empty rules compiled, ordered by
	// decreasing precedence, so the first that matches decides.
	matchers []matcher
	index    *matchIndex // nil for a small group
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
	Key   string
	Value string
	Line  int
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
// (see PathParamsQuery); rawURL is expected in its percent-encoded form,
// as sent on the wire.
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
	return g
}

// Groups returns all groups, merged, in order of first appearance. Groups
// whose user-agent lines name exactly the same set of groups in the file
// are reported as one Group with several Agents. The groups are shared
// and must not be modified.
func (r *Robots) Groups() []*Group {
	if r == nil {
		return nil
	}
	return append([]*Group(nil), r.groups...)
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
