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
	// TODO(robots): parsed groups, compiled rules, sitemaps, extensions.
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
	// TODO(robots): compiled matchers.
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
func ParseLimit(body []byte, maxBytes int) *Robots {
	panic("TODO(robots)")
}

// Decide reports whether rawURL may be fetched by the crawler whose product
// token is agent. Only the path, params and query of rawURL are matched.
func (r *Robots) Decide(agent, rawURL string) Decision { panic("TODO(robots)") }

// DecidePath is like Decide for an already extracted path[;params][?query]
// (as returned by PathParamsQuery).
func (r *Robots) DecidePath(agent, path string) Decision { panic("TODO(robots)") }

// Group returns the group that applies to agent: the merged groups naming
// it, else the "*" group, else nil.
func (r *Robots) Group(agent string) *Group { panic("TODO(robots)") }

// Groups returns all groups, merged, in order of first appearance.
func (r *Robots) Groups() []*Group { panic("TODO(robots)") }

// Sitemaps returns the values of all Sitemap lines, in file order.
func (r *Robots) Sitemaps() []string { panic("TODO(robots)") }

// Extensions returns the lines with unknown fields, in file order.
func (r *Robots) Extensions() []Extension { panic("TODO(robots)") }

// AllowsNothing reports whether the group for agent disallows every path
// (so a whole site is closed to it), e.g. "Disallow: /" with no Allow.
func (r *Robots) AllowsNothing(agent string) bool { panic("TODO(robots)") }

// ProductToken returns the product token of a User-Agent header value: its
// leading run of [A-Za-z_-], e.g. "MyBot" for "MyBot/2.1 (+https://x)".
func ProductToken(userAgent string) string { panic("TODO(robots)") }

// PathParamsQuery returns the part of rawURL that robots.txt rules match:
// path, params and query, without scheme, authority and fragment; "/"
// when there is no path.
func PathParamsQuery(rawURL string) string { panic("TODO(robots)") }
