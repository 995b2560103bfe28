package egress

import (
	"net/netip"
)

// The egress policy: which classes of addresses robotsgate connects to,
// with the operator's lists.

// Policy decides whether robotsgate may connect to an address. The zero
// Policy refuses Private and Metadata addresses. A Policy is immutable
// and safe for concurrent use.
type Policy struct {
	allowPrivate bool
	allow, deny  []netip.Prefix
}

// NewPolicy returns the policy of the settings egress.private
// (allowPrivate: allow), egress.allow_cidrs and egress.deny_cidrs. The
// lists are matched against an address and against the IPv4 address it
// spells ([embedded]), so that 10.0.0.0/8 also covers ::ffff:10.0.0.1.
func NewPolicy(allowPrivate bool, allow, deny []netip.Prefix) *Policy {
	return &Policy{allowPrivate: allowPrivate, allow: unmapped(allow), deny: unmapped(deny)}
}

// unmapped returns ps with IPv4-mapped prefixes written as IPv4 ones.
func unmapped(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ps))
	for _, p := range ps {
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out
}

// Verdict is the policy's answer for one address.
type Verdict struct {
	Allowed bool
	// Public: the address counts as public, its class being Public or
	// the operator listing it in egress.allow_cidrs (and not in
	// egress.deny_cidrs).
	Public bool
	// Why says, for a refused address, what it is ("private",
	// "link-local or cloud metadata", "listed in egress.deny_cidrs").
	Why string
}

// Check returns the verdict on connecting to ip: refused when
// egress.deny_cidrs lists it; allowed and public when egress.allow_cidrs
// does; otherwise as its class says (Metadata refused, Private refused
// unless egress.private is allow).
func (p *Policy) Check(ip netip.Addr) Verdict {
	if !ip.IsValid() {
		return Verdict{Why: "not an address"}
	}
	v4, _ := embedded(ip)
	switch {
	case p.listed(p.deny, ip, v4):
		return Verdict{Why: "listed in egress.deny_cidrs"}
	case p.listed(p.allow, ip, v4):
		return Verdict{Allowed: true, Public: true}
	}
	switch c := Classify(ip); {
	case c == Public:
		return Verdict{Allowed: true, Public: true}
	case c == Private && p.allowPrivate:
		return Verdict{Allowed: true}
	default:
		return Verdict{Why: c.String()}
	}
}

// listed reports whether ps holds ip or v4, the IPv4 address it spells.
func (p *Policy) listed(ps []netip.Prefix, ip, v4 netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, pr := range ps {
		if pr.Contains(ip) || pr.Contains(v4) {
			return true
		}
	}
	return false
}
