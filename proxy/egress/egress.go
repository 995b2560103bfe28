// Package egress classifies the IP addresses robotsgate may connect to
// (the egress policy): link-local and cloud metadata addresses are
// refused whatever the setting, private addresses (loopback, RFC 1918,
// CGNAT, ULA, ...) as egress.private says, and the operator's lists
// (egress.allow_cidrs, egress.deny_cidrs) override both. Every spelling
// of an IPv4 address in IPv6 that reaches it (IPv4-mapped, NAT64, 6to4,
// IPv4-compatible) is classified as the IPv4 address it embeds.
package egress

import (
	"net/netip"
)

// Class is what an address is, before the operator's lists.
type Class int

// The classes of addresses.
const (
	// Public: a global unicast address.
	Public Class = iota
	// Private: loopback, RFC 1918, CGNAT, ULA, unspecified, 0.0.0.0/8,
	// and the other non-global ranges listed in [privateRanges]; refused
	// unless egress.private is allow.
	Private
	// Metadata: link-local and cloud metadata addresses; refused unless
	// egress.allow_cidrs lists them.
	Metadata
)

// String names the class as refusals say it.
func (c Class) String() string {
	switch c {
	case Private:
		return "private"
	case Metadata:
		return "link-local or cloud metadata"
	}
	return "public"
}

// metadataRanges are always refused unless allowed explicitly: they are
// checked before [privateRanges], which contain some of them.
var metadataRanges = prefixes(
	"169.254.0.0/16",     // IPv4 link-local, cloud metadata 169.254.169.254
	"100.100.100.200/32", // Alibaba Cloud metadata (inside CGNAT)
	"fe80::/10",          // IPv6 link-local
	"fd00:ec2::254/128",  // AWS IPv6 metadata (inside ULA)
)

// privateRanges are refused under egress.private: deny.
var privateRanges = prefixes(
	"0.0.0.0/8",      // "this network"; 0.0.0.0 reaches this host
	"10.0.0.0/8",     // RFC 1918
	"100.64.0.0/10",  // CGNAT (RFC 6598)
	"127.0.0.0/8",    // loopback
	"172.16.0.0/12",  // RFC 1918
	"192.0.0.0/24",   // IETF protocol assignments
	"192.168.0.0/16", // RFC 1918
	"198.18.0.0/15",  // benchmarking, used as internal space
	"224.0.0.0/4",    // multicast
	"240.0.0.0/4",    // reserved, broadcast
	"::/128",         // unspecified
	"::1/128",        // loopback
	"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
	"fc00::/7",       // unique local (ULA)
	"fec0::/10",      // deprecated site-local
	"ff00::/8",       // multicast
)

// nat64, [sixToFour], compat and siit are the IPv6 spellings that carry
// an IPv4 address a gateway or stack may route to: the well-known NAT64
// prefix (last 32 bits), 6to4 (bits 16 to 47), the deprecated
// IPv4-compatible addresses and the IPv4-translated addresses of SIIT
// (last 32 bits).
var (
	siit      = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	compat    = netip.MustParsePrefix("::/96")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// embedded returns the IPv4 address ip stands for when it is an IPv4
// address or an IPv6 spelling of one (IPv4-mapped ::ffff:a.b.c.d, NAT64
// 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::, IPv4-compatible ::a.b.c.d
// other than :: and ::1), and ok; otherwise ip without its zone, and
// false.
func embedded(ip netip.Addr) (netip.Addr, bool) {
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip, true
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip), siit.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case compat.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return ip, false
}

// Classify returns the class of ip, read through its IPv4 spelling
// ([embedded]). An invalid address is Private.
func Classify(ip netip.Addr) Class {
	if !ip.IsValid() {
		return Private
	}
	ip, _ = embedded(ip)
	if contains(metadataRanges, ip) {
		return Metadata
	}
	if contains(privateRanges, ip) {
		return Private
	}
	return Public
}

func contains(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
