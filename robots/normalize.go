package robots

// Patterns and paths are compared in one canonical percent-encoding, which
// implements RFC 9309 §2.2.2 ("percent-encoded unreserved characters are
// decoded, non-ASCII characters are percent-encoded") and the equivalences
// of its Figures 4 and 6: each octet, given literally or as %XX, is written
// literally when it is a printable ASCII character other than '%'
// (0x21-0x7E), and as %XX with upper-case hex otherwise. So "%62" and "b",
// "%2F" and "/", "%2A" and a literal "*" in a URL compare equal, while a
// '*' or final '$' written literally in a pattern keeps its special
// meaning.

import "unsafe"

const hexDigits = "0123456789ABCDEF"

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

// appendOctet appends octet c in canonical form.
func appendOctet(dst []byte, c byte) []byte {
	if 0x21 <= c && c <= 0x7E && c != '%' {
		return append(dst, c)
	}
	return append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
}

// appendCanon appends the canonical form of a URL path to dst.
func appendCanon(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		dst = appendOctet(dst, c)
	}
	return dst
}

// isCanonical reports whether s is its own canonical form: only printable
// ASCII other than '%'.
func isCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7E || c == '%' {
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
