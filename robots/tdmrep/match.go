package tdmrep

import (
	"strings"

	"github.com/robotsgate/robotsgate/robots"
)

// Patterns and paths are compared in one canonical percent-encoding, as
// the protocol says: a percent-encoded unreserved character (ALPHA,
// DIGIT, '-', '.', '_', '~') is decoded before comparison, any other
// escape is kept (with upper-case hex, "%2f" and "%2F" being the same
// octet), so "%2F" and "/" differ; an octet a URI may not hold literally
// (non-ASCII, controls, space, '"', '<', '>', '\', '^', '`', '{', '|',
// '}', a '%' that starts no escape) is percent-encoded. In a pattern, '*'
// stands for any run of characters and a final '$' ends the match; a
// literal '*' or '$' of a URL is written "%2A" or "%24" in a pattern
// (the protocol's example "/path/foo-%24" for ".../path/foo-$"), so a
// URL's literal '*' and '$' are compared as "%2A" and "%24".

const hexDigits = "0123456789ABCDEF"

// canonicalPattern returns location's canonical form: the literal runs
// between its wildcards, and whether it ends with '$'.
func canonicalPattern(location string) robots.Segments {
	anchored := strings.HasSuffix(location, "$")
	if anchored {
		location = location[:len(location)-1]
	}
	parts := strings.Split(location, "*")
	for i, p := range parts {
		parts[i] = canonical(p)
	}
	return robots.Segments{Segs: parts, Anchored: anchored}
}

// canonicalPath returns the canonical form of a URL's path and query.
func canonicalPath(path string) string { return canonical(path) }

// canonical writes s in the canonical percent-encoding; a literal '*' or
// '$' becomes "%2A" or "%24".
func canonical(s string) string {
	if isCanonical(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(d) {
				sb.WriteByte(d)
			} else {
				escape(&sb, d)
			}
			i += 2
			continue
		}
		if c == '*' || c == '$' || !uriRaw(c) {
			escape(&sb, c)
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// isCanonical reports whether s is already canonical: no '%', '*', '$'
// and only octets a URI may hold literally.
func isCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c == '*' || c == '$' || !uriRaw(c) {
			return false
		}
	}
	return true
}

func escape(sb *strings.Builder, c byte) {
	sb.WriteByte('%')
	sb.WriteByte(hexDigits[c>>4])
	sb.WriteByte(hexDigits[c&15])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// unreserved reports whether c is an unreserved character (RFC 3986 §2.3).
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// uriRaw reports whether a URI may hold c literally: an unreserved or a
// reserved character (RFC 3986 §2.2-2.3).
func uriRaw(c byte) bool {
	return unreserved(c) || strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}
