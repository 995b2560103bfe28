package enforce

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrInvalidHost is wrapped by the errors of [CanonicalHost] (and so of
// [Origin] and [Authority]) for a host that names no address robotsgate
// can decide for: invalid IDNA, characters no host name may hold, empty
// labels, a name ending in a number that is not a dotted-quad IPv4
// address. Such a request is refused ([ReasonInvalidHost]), never fetched.
var ErrInvalidHost = errors.New("invalid host")

// Host name length limits of DNS (RFC 1035 §2.3.4): a name that breaks
// them cannot be resolved.
const (
	maxHostLen  = 253
	maxLabelLen = 63
)

// CanonicalHost returns the one spelling of host (a URL's host without
// its port; an IPv6 literal with or without brackets) that robotsgate
// keys every per-origin state on and dials:
//
//   - an IP literal in netip's canonical text; an IPv4-mapped IPv6
//     address ("::ffff:7f00:1", "::FFFF:127.0.0.1") is the IPv4 address it
//     dials ("127.0.0.1"); an IPv6 address is bracketed; its zone is dropped
//     where the kernel ignores it (not link-local: "[::1%lo]" is
//     "[::1]"), kept as in [url.URL.Host] where it names an interface
//     ("[fe80::1%en0]"), refused when it is an interface index;
//   - a name mapped to its A-label (ASCII) form by UTS #46 with the
//     profile net/http's transport applies to non-ASCII names
//     ([idna.Lookup]: "ｌocalhost" is "localhost", "Bücher.de" is
//     "xn--bcher-kva.de"), lower-cased, its trailing dot removed.
//
// IPv4 shorthands ("127.1", "0x7f.1", "2130706433", "0177.0.0.1") are
// refused, not converted: Go's own resolver does not read them as
// addresses but a C resolver does, so the address they dial depends on
// the build. A name whose last label is a number is treated the same way
// (the WHATWG URL Standard reads it as an IPv4 address). The error wraps
// [ErrInvalidHost].
func CanonicalHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", hostErr(host, "unbalanced brackets")
		}
		host = host[1 : len(host)-1]
		if strings.IndexByte(host, ':') < 0 {
			return "", hostErr(host, "brackets around something that is not an IPv6 address")
		}
	}
	if strings.IndexByte(host, ':') >= 0 {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return "", hostErr(host, "not an IPv6 address")
		}
		return zoned(ip)
	}
	name, err := asciiName(host)
	if err != nil {
		return "", err
	}
	numeric, err := checkName(name)
	if err != nil {
		return "", err
	}
	if numeric {
		ip, err := netip.ParseAddr(name)
		if err != nil || !ip.Is4() {
			return "", hostErr(name, "a number that is not a dotted-quad IPv4 address (IPv4 shorthands are refused)")
		}
		// ParseAddr takes only four decimal octets without leading
		// zeros: name is already the address's canonical text.
		return name, nil
	}
	return name, nil
}

// zoned returns the canonical text of the IPv6 address ip, whose zone
// only names an interface for a link-local address: elsewhere the kernel
// ignores it ("[::1%lo]" and "[::1%eth0]" dial [::1]), so it is dropped.
// A link-local address must name its interface, not its index ("%2"
// and "%eth0" may be the same interface, which would be two origins).
func zoned(ip netip.Addr) (string, error) {
	if z := ip.Zone(); z != "" {
		if !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() {
			ip = ip.WithZone("")
		} else if allDigits(z) {
			return "", hostErr(ip.String(), "an interface index as zone: name the interface")
		}
	}
	return ipText(ip), nil
}

// ipText is the canonical text of ip as a URL host.
func ipText(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	return "[" + ip.String() + "]"
}

// asciiName returns the name host, mapped by UTS #46 when it is not
// ASCII, lower-cased, without its trailing dot.
func asciiName(host string) (string, error) {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			a, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return "", fmt.Errorf("%w %q: IDNA: %w", ErrInvalidHost, host, err)
			}
			host = a
			break
		}
	}
	if hasUpper(host) {
		host = strings.ToLower(host)
	}
	return strings.TrimSuffix(host, "."), nil
}

// checkName checks the ASCII, lower-case name: labels of letters, digits,
// hyphens and underscores (seen in real host names), none empty, within
// the DNS length limits. numeric reports that its last label is a number:
// then it must be an IPv4 address.
func checkName(name string) (numeric bool, err error) {
	if name == "" {
		return false, hostErr(name, "empty name")
	}
	if len(name) > maxHostLen {
		return false, hostErr(name[:32]+"...", "longer than "+strconv.Itoa(maxHostLen)+" bytes")
	}
	last := ""
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return false, hostErr(name, "empty label")
		}
		if len(label) > maxLabelLen {
			return false, hostErr(name, "label longer than "+strconv.Itoa(maxLabelLen)+" bytes")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false, hostErr(name, fmt.Sprintf("character %q", c))
			}
		}
		last = label
	}
	return endsInNumber(last), nil
}

// endsInNumber reports whether label is a number as the WHATWG URL
// Standard's IPv4 parser reads one: decimal digits, or "0x" and hex digits.
func endsInNumber(label string) bool {
	if allDigits(label) {
		return true
	}
	if len(label) < 2 || label[0] != '0' || label[1] != 'x' {
		return false
	}
	for i := 2; i < len(label); i++ {
		if c := label[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func hostErr(host, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidHost, host, why)
}
