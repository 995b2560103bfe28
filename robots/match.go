package robots

import "github.com/robotsgate/robotsgate/robots/internal/index"

// A decision, as RFC 9309 states it: the path /robots.txt is always
// allowed; a crawler no group applies to may fetch anything; otherwise
// the longest matching pattern of its group decides, Allow winning a tie.
// The engine of package index finds that pattern.

// matchAgentPath matches path (with a "/" prepended when slash is set)
// against the group for agent: /robots.txt is always allowed, a path no
// group applies to is allowed, else the group's longest match decides
// (the engine's answer, see package index, which the reference matcher
// of the package's tests states plainly).
func (r *Robots) matchAgentPath(agent, path string, slash bool) Match {
	g, tok := r.lookup(agent)
	var buf [index.StackPath]byte
	p := index.CanonPath(&buf, path, slash)
	if string(p) == "/robots.txt" {
		return Match{Allowed: true, Rule: Rule{Allow: true, Pattern: "/robots.txt"}, Group: tok}
	}
	if g == nil {
		return Match{Allowed: true}
	}
	if rule, ok := r.ix.Match(r.parts(g), p); ok {
		return Match{Allowed: rule.Allow, Rule: Rule(rule), Group: tok}
	}
	return Match{Allowed: true, Group: tok}
}
