package index

// Patterns and paths are compared in one canonical percent-encoding, which
// implements RFC 9309 §2.2.2 and the equivalences of its Figures 4 and 6.
// Each octet, given literally or as %XX, is written:
//
//   - literally when it was escaped and is an unreserved character (ALPHA,
//     DIGIT, '-', '.', '_', '~'; RFC 3986 §2.3) or one of '*' and '$',
//     which a pattern can only write escaped (Figure 6): "%62" and "b",
//     "%2A" and a literal '*' in a URL compare equal;
//   - as %XX with upper-case hex when it was escaped and is any other
//     octet: an escaped reserved character ("%2F", "%3A", "%3D") is not the
//     character itself (RFC 3986 §2.2), so "%2F" and "/" differ, while
//     "%2f" and "%2F" are the same;
//   - literally when it was given literally and may appear so in a URI (an
//     unreserved or reserved character, RFC 3986 §2.2-2.3);
//   - as %XX otherwise: non-ASCII, controls, space, '"', '<', '>', '\',
//     '^', '`', '{', '|', '}' and a '%' that starts no escape are
//     percent-encoded before comparing, so a raw "é" and "%C3%A9", a raw
//     space and "%20" compare equal.
//
// A '*' or final '$' written literally in a pattern keeps its special
// meaning.

import "unsafe"

const hexDigits = "0123456789ABCDEF"

// Bit sets over the ASCII octets (bit c of word c>>6): [uriRaw0]/1 are the
// unreserved and reserved characters, which a URI may hold literally;
// decoded0/1 are the unreserved characters and '*' and '$', whose escapes
// are decoded. TestOctetClasses checks them against the RFC's lists.
const (
	uriRaw0  uint64 = 0xafffffda00000000
	uriRaw1  uint64 = 0x47fffffeafffffff
	decoded0 uint64 = 0x03ff641000000000
	decoded1 uint64 = 0x47fffffe87fffffe
)

// inSet reports whether ASCII octet c is in the set given by its two words.
func inSet(c byte, lo, hi uint64) bool {
	switch {
	case c < 64:
		return lo>>c&1 != 0
	case c < 128:
		return hi>>(c-64)&1 != 0
	}
	return false
}

// uriRaw reports whether a URI may hold octet c literally.
func uriRaw(c byte) bool { return inSet(c, uriRaw0, uriRaw1) }

// decodedEscape reports whether an escape of octet c is decoded.
func decodedEscape(c byte) bool { return inSet(c, decoded0, decoded1) }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// appendCanonAt appends the canonical form of the octet at s[i], or of the
// escape "%XX" that starts there, and returns the number of bytes of s it
// read (1 or 3).
func appendCanonAt(dst []byte, s string, i int) ([]byte, int) {
	c := s[i]
	if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
		c = unhex(s[i+1])<<4 | unhex(s[i+2])
		if decodedEscape(c) {
			return append(dst, c), 3
		}
		return append(dst, '%', hexDigits[c>>4], hexDigits[c&15]), 3
	}
	if c != '%' && uriRaw(c) {
		return append(dst, c), 1
	}
	return append(dst, '%', hexDigits[c>>4], hexDigits[c&15]), 1
}

// appendCanon appends the canonical form of a URL path to dst.
func appendCanon(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		var n int
		dst, n = appendCanonAt(dst, s, i)
		i += n
	}
	return dst
}

// isCanonical reports whether s is its own canonical form: only octets a
// URI may hold literally, and no '%'.
func isCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || !uriRaw(c) {
			return false
		}
	}
	return true
}

// bytesOf returns the bytes of s without copying them. The result must not
// be modified.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
