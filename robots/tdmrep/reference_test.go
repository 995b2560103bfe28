package tdmrep

import (
	"strings"

	"github.com/robotsgate/robotsgate/robots"
)

// The reference matchers the fast one ([robots.FirstMatch]) is compared
// with: one pattern at a time, in file order.

// matchPattern reports whether p matches the canonical path s: its
// first run is a prefix of s, its other runs follow in order with any
// characters between them, and an anchored pattern ends where s ends.
// Taking each run at its leftmost place is enough for patterns whose
// only operator is '*'; each run is found with [strings.Index], so a
// match costs about len(s) per run, never len(s) times len(p).
func matchPattern(p robots.Segments, s string) bool {
	first := p.Segs[0]
	if !strings.HasPrefix(s, first) {
		return false
	}
	if len(p.Segs) == 1 {
		return !p.Anchored || len(s) == len(first)
	}
	pos := len(first)
	last := len(p.Segs) - 1
	for _, seg := range p.Segs[1:last] {
		i := strings.Index(s[pos:], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	tail := p.Segs[last]
	if p.Anchored {
		return len(s)-pos >= len(tail) && strings.HasSuffix(s, tail)
	}
	return strings.Contains(s[pos:], tail)
}

// refFirst is File.Match done with matchPattern, rule by rule.
func refFirst(f *File, path string) *Rule {
	s := canonicalPath(path)
	for i := range f.Rules {
		if matchPattern(canonicalPattern(f.Rules[i].Location), s) {
			return &f.Rules[i]
		}
	}
	return nil
}
