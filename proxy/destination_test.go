package proxy

import (
	"testing"

	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// TestIsHostPort: isHostPort(s, host, port) says exactly whether s is
// selfaddr.JoinHostPort(host, port), for names, IPv4 and IPv6 addresses
// and the spellings that differ from it only slightly.
func TestIsHostPort(t *testing.T) {
	hosts := []string{"a.test", "a.tes", "127.0.0.1", "::1", "fe80::1%eth0", ""}
	ports := []uint16{0, 1, 80, 443, 8443, 65535}
	spellings := []string{"a.test:443", "a.test:0443", "a.test:443 ", "A.test:443", "a.test:", "a.test", "a.testx:443",
		"[::1]:443", "::1:443", "[::1]443", "[::1]:", "[fe80::1%eth0]:8443", ":443", ":", "", "127.0.0.1:80", "127.0.0.1:8",
		"a.test:65535", "a.test:65536", "[a.test]:443"}
	for _, h := range hosts {
		for _, p := range ports {
			join := selfaddr.JoinHostPort(h, p)
			for _, s := range append(spellings, join) {
				if got, want := isHostPort(s, h, p), s == join; got != want {
					t.Errorf("isHostPort(%q, %q, %d) = %v, want %v", s, h, p, got, want)
				}
			}
		}
	}
}
