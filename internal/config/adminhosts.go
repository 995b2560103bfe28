package config

import (
	"fmt"
	"net"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
)

// The admin_hosts setting: the host names (or addresses) a request to
// the admin API may give as its Host besides the listener's own address
// and localhost, which proxy/admin always answers. Every other Host is
// refused there (DNS rebinding: a web page whose name was made to
// resolve to robotsgate's address sends its own name), so a name that
// clients reach the admin API by (a Prometheus target, a load balancer's
// health check) must be listed.

// validateAdminHosts checks admin_hosts: each item a host name or an IP
// address, without scheme, port, path or wildcard.
func (c *Config) validateAdminHosts() error {
	for i, h := range c.AdminHosts {
		if _, err := AdminHost(h); err != nil {
			return errorf(fmt.Sprintf("admin_hosts[%d]", i), "%w", err)
		}
	}
	return nil
}

// AdminHost returns the admin_hosts item h in the canonical spelling of
// a host ([enforce.CanonicalHost]: lower case, no trailing dot, an IPv6
// address bracketed), the spelling a request's Host is compared in.
func AdminHost(h string) (string, error) {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return "", fmt.Errorf("empty: want a host name or address, e.g. robotsgate.internal")
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/*?#@ "):
		return "", fmt.Errorf("%q is not a host name or address (no scheme, path or wildcard), e.g. robotsgate.internal", h)
	}
	if _, _, err := net.SplitHostPort(h); err == nil && !strings.HasPrefix(h, "[") || strings.HasPrefix(h, "[") && !strings.HasSuffix(h, "]") {
		return "", fmt.Errorf("%q has a port: list the host alone (any port is accepted)", h)
	}
	if strings.Count(h, ":") >= 2 && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]" // a bare IPv6 address
	}
	canon, err := enforce.CanonicalHost(h)
	if err != nil {
		return "", fmt.Errorf("%q: %w", h, err)
	}
	return canon, nil
}
