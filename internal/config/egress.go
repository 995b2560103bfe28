package config

import (
	"net/netip"
)

// The egress: section: which destination addresses robotsgate connects
// to, for proxied requests and for its own policy fetches.

// EgressConfig is the egress policy's settings.
type EgressConfig struct {
	// Private is whether private addresses (loopback, RFC 1918, CGNAT,
	// ULA, ...) may be reached; "" = [Config.EgressPrivateAllowed]'s
	// default.
	Private EgressPrivate
	// AllowCIDRs are reached whatever their class (metadata included)
	// and count as public; DenyCIDRs are never reached.
	AllowCIDRs []netip.Prefix
	DenyCIDRs  []netip.Prefix
}

// EgressPrivate is a value of egress.private.
type EgressPrivate string

// Values of egress.private.
const (
	EgressPrivateAuto  EgressPrivate = ""      // deny when listen is beyond loopback, allow on loopback
	EgressPrivateDeny  EgressPrivate = "deny"  // refuse private destinations
	EgressPrivateAllow EgressPrivate = "allow" // connect to private destinations
)

// Valid reports whether p is a value of egress.private.
func (p EgressPrivate) Valid() bool {
	return p == EgressPrivateAuto || p == EgressPrivateDeny || p == EgressPrivateAllow
}

// EgressPrivateAllowed reports whether private destinations may be
// reached: as egress.private says, or, when it is empty, only when the
// proxy listens on loopback (the rule that makes credentials mandatory
// beyond it: a proxy others can use must not reach this host's network).
func (c *Config) EgressPrivateAllowed() bool {
	switch c.Egress.Private {
	case EgressPrivateAllow:
		return true
	case EgressPrivateDeny:
		return false
	}
	return IsLoopbackAddr(c.Listen)
}

func egressOptions() []option {
	return []option{
		{"egress.private", "egress-private", "private destinations (loopback, RFC 1918, CGNAT 100.64/10, ULA fc00::/7, 0.0.0.0/8, in any IPv6 spelling): deny (403 destination-private) or allow; empty = deny when listen is beyond loopback, allow on loopback. Link-local and cloud metadata addresses are refused either way", func(c *Config) any { return (*string)(&c.Egress.Private) }, atReload},
		{"egress.allow_cidrs", "egress-allow-cidrs", "comma-separated destination networks (CIDRs or addresses) robotsgate connects to whatever their class, metadata included; they count as public", func(c *Config) any { return &c.Egress.AllowCIDRs }, atReload},
		{"egress.deny_cidrs", "egress-deny-cidrs", "comma-separated destination networks (CIDRs or addresses) never connected to (403 destination-private); they win over allow_cidrs", func(c *Config) any { return &c.Egress.DenyCIDRs }, atReload},
	}
}

// validateEgress checks the egress: section.
func (c *Config) validateEgress() error {
	if err := checkMode("egress.private", c.Egress.Private, EgressPrivateDeny, EgressPrivateAllow); err != nil {
		return err
	}
	for _, l := range []struct {
		key string
		ps  []netip.Prefix
	}{{"egress.allow_cidrs", c.Egress.AllowCIDRs}, {"egress.deny_cidrs", c.Egress.DenyCIDRs}} {
		for _, p := range l.ps {
			if !p.IsValid() {
				return errorf(l.key, "%q is not a CIDR", p)
			}
		}
	}
	return nil
}
