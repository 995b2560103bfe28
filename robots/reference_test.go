package robots

import (
	"strings"
	"testing"
)

// The reference matcher: RFC 9309's longest-match rule read plainly, which
// FuzzDecide (and the tests of the engine's filters and indexes) hold
// Match to. It states what the engine in package index computes:
//
//   - the path, params and query are matched, "/" prepended when the path
//     lacks it, and /robots.txt is always allowed;
//   - a pattern matches when its octets match a prefix of the path, '*'
//     matching any run of octets and a final '$' the end of the path; an
//     empty pattern never matches;
//   - the longest pattern wins, its length counted in octets as written
//     with each non-ASCII octet counted as its %XX escape; Allow wins a tie
//     (Google's rule), else the earlier line;
//   - an Allow of ".../index.htm..." also allows its directory (".../$"),
//     as Google's matcher does;
//   - pattern and path are compared after the percent-encoding
//     normalisation of RFC 9309 §2.2.2 spelt out below.
//
// The reference is deliberately simple: it canonicalises
// pattern and path with its own code (decode every %XX, then write each
// octet back by the RFC 9309 §2.2.2 rules spelt out with the RFC 3986
// character lists: an escaped octet literally when unreserved or '*' or
// '$', else as %XX; a literal octet as is when a URI may hold it, else as
// %XX), and matches with a textbook dynamic-programming glob over the
// canonical strings, with no segment splitting, early exits or index.

// refTok is one token of a pattern: the wildcard or one canonical
// character.
type refTok struct {
	wild bool
	lit  string // canonical text of one octet
}

const (
	refUnreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	refReserved   = ":/?#[]@!$&'()*+,;="
)

// refOctets returns the octets of s, whether each was given as an escape,
// and whether each is a literal '*' (the wildcard, in a pattern).
func refOctets(s string) (octs []byte, escaped, literalStar []bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		esc := false
		if c == '%' && i+2 < len(s) && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i+1])) &&
			strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i+2])) {
			var v byte
			for _, h := range s[i+1 : i+3] {
				v <<= 4
				switch {
				case h >= '0' && h <= '9':
					v |= byte(h - '0')
				case h >= 'a' && h <= 'f':
					v |= byte(h-'a') + 10
				default:
					v |= byte(h-'A') + 10
				}
			}
			c, esc = v, true
			i += 2
		}
		octs = append(octs, c)
		escaped = append(escaped, esc)
		literalStar = append(literalStar, c == '*' && !esc)
	}
	return octs, escaped, literalStar
}

func refOctetText(c byte, escaped bool) string {
	literal := c < 0x80 && strings.IndexByte(refUnreserved+refReserved, c) >= 0
	if escaped {
		literal = c < 0x80 && strings.IndexByte(refUnreserved+"*$", c) >= 0
	}
	if literal {
		return string(rune(c))
	}
	return "%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15]))
}

func refCanonPath(path string) string {
	octs, escaped, _ := refOctets(path)
	var sb strings.Builder
	for i, c := range octs {
		sb.WriteString(refOctetText(c, escaped[i]))
	}
	return sb.String()
}

// refMatch reports whether pattern matches path, by the RFC 9309 rules and
// our canonical encoding.
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	octs, escaped, wild := refOctets(pattern)
	var pat []refTok
	for i, c := range octs {
		if wild[i] {
			pat = append(pat, refTok{wild: true})
			continue
		}
		for _, b := range []byte(refOctetText(c, escaped[i])) {
			pat = append(pat, refTok{lit: string(rune(b))})
		}
	}
	text := refCanonPath(path)
	// ok[i][j]: pat[:i] matches text[:j].
	ok := make([][]bool, len(pat)+1)
	for i := range ok {
		ok[i] = make([]bool, len(text)+1)
	}
	ok[0][0] = true
	for i := 1; i <= len(pat); i++ {
		for j := 0; j <= len(text); j++ {
			if pat[i-1].wild {
				ok[i][j] = ok[i-1][j] || j > 0 && ok[i][j-1]
			} else {
				ok[i][j] = j > 0 && ok[i-1][j-1] && text[j-1] == pat[i-1].lit[0]
			}
		}
	}
	if anchored {
		return ok[len(pat)][len(text)]
	}
	for j := 0; j <= len(text); j++ {
		if ok[len(pat)][j] {
			return true
		}
	}
	return false
}

// refDecide decides path against rules the slow way: every rule is tried,
// the longest pattern (octets, non-ASCII counted %-encoded) wins, Allow
// wins ties, the earlier line wins among equals.
func refDecide(rules []Rule, path string) (allowed bool, line int) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if refCanonPath(path) == "/robots.txt" {
		return true, 0
	}
	bestPrio, bestAllow, bestLine := 0, true, 0
	consider := func(r Rule, pattern string) {
		if pattern == "" || !refMatch(pattern, path) {
			return
		}
		prio := len(pattern)
		for i := 0; i < len(pattern); i++ {
			if pattern[i] >= 0x80 {
				prio += 2
			}
		}
		if prio > bestPrio || prio == bestPrio && r.Allow && !bestAllow {
			bestPrio, bestAllow, bestLine = prio, r.Allow, r.Line
		}
	}
	for _, r := range rules {
		consider(r, r.Pattern)
		if i := strings.LastIndex(r.Pattern, "/"); r.Allow && i >= 0 && strings.HasPrefix(r.Pattern[i:], "/index.htm") {
			consider(r, r.Pattern[:i+1]+"$")
		}
	}
	return bestAllow, bestLine
}

func TestReferenceMatcher(t *testing.T) {
	for _, tt := range []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/", true}, {"/a", "/", false}, {"/a*c", "/abbbc", true}, {"/a*c$", "/abcx", false},
		{"/a%2A", "/a*", true}, {"/a*", "/a", true}, {"*.gif$", "/x.gif", true}, {"/a$b", "/a$b", true},
	} {
		if got := refMatch(tt.pattern, tt.path); got != tt.want {
			t.Errorf("refMatch(%q, %q) = %v", tt.pattern, tt.path, got)
		}
	}
}
