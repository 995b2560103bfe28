package index

import (
	"strings"
	"testing"
)

// TestOctetClasses checks the octet sets of the canonical encoding
// against RFC 3986's lists of unreserved and reserved characters.
func TestOctetClasses(t *testing.T) {
	const (
		unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
		reserved   = ":/?#[]@!$&'()*+,;="
	)
	for c := 0; c < 256; c++ {
		b := byte(c)
		raw := c < 0x80 && strings.IndexByte(unreserved+reserved, b) >= 0
		dec := c < 0x80 && strings.IndexByte(unreserved+"*$", b) >= 0
		if uriRaw(b) != raw || decodedEscape(b) != dec {
			t.Errorf("octet %#02x: uriRaw %v (want %v), decodedEscape %v (want %v)", c, uriRaw(b), raw, decodedEscape(b), dec)
		}
	}
}
