package robottag

import (
	"slices"
	"strings"
)

// DefaultDeny returns the robot-tag directives that, by default, mean
// "do not keep this response": noindex and none.
func DefaultDeny() []string { return []string{"noindex", "none"} }

// Verdict reports whether the robot-tag directives ds (from
// [ParseXRobotsTag] and [ParseMetaRobots]) tell the crawler
// whose product token is agent not to keep the response, given the
// directives deny that count as "do not keep" ([DefaultDeny], possibly
// with additions such as "noai" or "noimageai").
//
// Only the directives that apply to agent count ([forAgent]: those
// for every agent and those naming agent), with "none" expanded to
// "noindex" and "nofollow". Each deny entry is compared
// case-insensitively by directive name (a directive's value is ignored)
// and expanded the same way, so that:
//
//   - a deny entry "noindex" matches a page that says "noindex" or "none";
//   - a deny entry "none" matches a page that says "none", or both
//     "noindex" and "nofollow" (in any headers or meta elements);
//   - a deny entry "nofollow" matches "nofollow" or "none";
//   - any other entry matches the directive of that name.
//
// denied is true when at least one deny entry matches; matched lists the
// matching deny entries, lower-cased, in the order of deny and without
// duplicates (for the default deny list and a page saying "none":
// ["noindex", "none"]). Empty deny entries are ignored; directives not in
// deny, known or not, never deny.
func Verdict(ds []Directive, agent string, deny []string) (denied bool, matched []string) {
	have := make(map[string]bool)
	for _, d := range forAgent(ds, agent) {
		have[d.Name] = true
	}
	for _, e := range deny {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" || slices.Contains(matched, e) {
			continue
		}
		ok := have[e]
		if e == "none" {
			ok = have["noindex"] && have["nofollow"]
		}
		if ok {
			matched = append(matched, e)
		}
	}
	return len(matched) > 0, matched
}
