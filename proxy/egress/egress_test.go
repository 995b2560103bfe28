package egress

import (
	"net/netip"
	"testing"
)

// TestClassify: every spelling of the addresses the policy names, read
// as the address it reaches.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, ip string
		want     Class
	}{
		{"metadata", "169.254.169.254", Metadata},
		{"link-local v4", "169.254.1.1", Metadata},
		{"metadata mapped", "::ffff:169.254.169.254", Metadata},
		{"metadata mapped hex", "::ffff:a9fe:a9fe", Metadata},
		{"metadata nat64", "64:ff9b::169.254.169.254", Metadata},
		{"metadata nat64 hex", "64:ff9b::a9fe:a9fe", Metadata},
		{"metadata 6to4", "2002:a9fe:a9fe::1", Metadata},
		{"metadata compat", "::169.254.169.254", Metadata},
		{"metadata siit", "::ffff:0:169.254.169.254", Metadata},
		{"loopback siit", "::ffff:0:7f00:1", Private},
		{"alibaba metadata", "100.100.100.200", Metadata},
		{"alibaba metadata mapped", "::ffff:100.100.100.200", Metadata},
		{"aws v6 metadata", "fd00:ec2::254", Metadata},
		{"link-local v6", "fe80::1", Metadata},
		{"link-local v6 zone", "fe80::1%eth0", Metadata},
		{"link-local v6 top", "febf:ffff::1", Metadata},
		{"loopback", "127.0.0.1", Private},
		{"loopback other", "127.8.9.10", Private},
		{"loopback mapped", "::ffff:127.0.0.1", Private},
		{"loopback nat64", "64:ff9b::7f00:1", Private},
		{"loopback v6", "::1", Private},
		{"unspecified v4", "0.0.0.0", Private},
		{"this network", "0.1.2.3", Private},
		{"unspecified v6", "::", Private},
		{"unspecified mapped", "::ffff:0.0.0.0", Private},
		{"rfc1918 10", "10.0.0.1", Private},
		{"rfc1918 10 mapped", "::ffff:10.0.0.1", Private},
		{"rfc1918 10 nat64", "64:ff9b::a00:1", Private},
		{"rfc1918 172", "172.16.5.4", Private},
		{"rfc1918 172 top", "172.31.255.255", Private},
		{"rfc1918 192", "192.168.1.1", Private},
		{"cgnat", "100.64.0.1", Private},
		{"cgnat top", "100.127.255.254", Private},
		{"cgnat mapped", "::ffff:100.64.0.1", Private},
		{"ula", "fc00::1", Private},
		{"ula fd", "fd12:3456::1", Private},
		{"local nat64", "64:ff9b:1::a", Private},
		{"multicast", "224.0.0.1", Private},
		{"broadcast", "255.255.255.255", Private},
		{"multicast v6", "ff02::1", Private},
		{"public v4", "93.184.215.14", Public},
		{"public v4 mapped", "::ffff:93.184.215.14", Public},
		{"public nat64", "64:ff9b::5db8:d70e", Public},
		{"public v6", "2606:4700::1111", Public},
		{"next to rfc1918 172", "172.32.0.1", Public},
		{"next to cgnat", "100.128.0.1", Public},
		{"next to link-local", "169.255.0.1", Public},
		{"next to alibaba", "100.100.100.201", Private}, // in CGNAT still
		{"invalid", "", Private},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ip netip.Addr
			if tc.ip != "" {
				ip = netip.MustParseAddr(tc.ip)
			}
			if got := Classify(ip); got != tc.want {
				t.Errorf("Classify(%s) = %v, want %v", tc.ip, got, tc.want)
			}
		})
	}
}

// TestPolicy: the operator's lists before the classes, and egress.private.
func TestPolicy(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	deny := NewPolicy(false, pfx("10.1.0.0/16", "169.254.169.254/32"), pfx("203.0.113.0/24", "10.1.2.0/24"))
	allow := NewPolicy(true, nil, pfx("::ffff:203.0.113.0/120"))
	for _, tc := range []struct {
		name       string
		p          *Policy
		ip         string
		ok, public bool
	}{
		{"deny: public", deny, "93.184.215.14", true, true},
		{"deny: private", deny, "10.0.0.1", false, false},
		{"deny: loopback", deny, "127.0.0.1", false, false},
		{"deny: listed private", deny, "10.1.0.1", true, true},
		{"deny: listed private mapped", deny, "::ffff:10.1.0.1", true, true},
		{"deny: deny list wins", deny, "10.1.2.3", false, false},
		{"deny: deny list public", deny, "203.0.113.9", false, false},
		{"deny: deny list nat64", deny, "64:ff9b::cb00:7109", false, false},
		{"deny: listed metadata", deny, "169.254.169.254", true, true},
		{"deny: other link-local", deny, "169.254.1.1", false, false},
		{"allow: private", allow, "10.0.0.1", true, false},
		{"allow: loopback v6", allow, "::1", true, false},
		{"allow: metadata", allow, "169.254.169.254", false, false},
		{"allow: metadata mapped", allow, "::ffff:169.254.169.254", false, false},
		{"allow: aws v6 metadata", allow, "fd00:ec2::254", false, false},
		{"allow: mapped deny prefix", allow, "203.0.113.5", false, false},
		{"allow: public", allow, "2606:4700::1111", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.Check(netip.MustParseAddr(tc.ip))
			if v.Allowed != tc.ok || v.Public != tc.public {
				t.Errorf("Check(%s) = %+v, want allowed %v public %v", tc.ip, v, tc.ok, tc.public)
			}
			if !v.Allowed && v.Why == "" {
				t.Errorf("Check(%s) refused without a reason", tc.ip)
			}
		})
	}
	if v := deny.Check(netip.Addr{}); v.Allowed {
		t.Errorf("the zero Addr is allowed: %+v", v)
	}
}
