package enforce

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestCanonicalHost: each spelling maps to the one host robotsgate keys
// on and dials; a host with no canonical spelling wraps ErrInvalidHost.
func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"localhost": "localhost", "LocalHost.": "localhost", "ｌocalhost": "localhost",
		"ＬＯＣＡＬＨＯＳＴ": "localhost", "localhost．": "localhost",
		"Bücher.de": "xn--bcher-kva.de", "XN--BCHER-KVA.DE": "xn--bcher-kva.de",
		"127.0.0.1": "127.0.0.1", "１２７.０.０.１": "127.0.0.1",
		"[::ffff:127.0.0.1]": "127.0.0.1", "[::ffff:7f00:1]": "127.0.0.1", "[::FFFF:7F00:0001]": "127.0.0.1",
		"::ffff:7f00:1": "127.0.0.1", "[0:0:0:0:0:0:0:1]": "[::1]", "[2001:DB8::0001]": "[2001:db8::1]",
		"[fe80::1%en0]": "[fe80::1%en0]", "[::1%lo]": "[::1]", "[::1%1]": "[::1]", "[2001:db8::1%eth0]": "[2001:db8::1]", "my_host.example": "my_host.example", "a-b.c": "a-b.c",
	} {
		got, err := CanonicalHost(in)
		if err != nil || got != want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", ".", "a..b", "..a", "a b", "a!b", "a%62", "127.1", "0x7f.1", "2130706433", "0177.0.0.1", "0",
		"127.0.0.01", "[fe80::1%2]", "１２７.１", "x.0x1f", "a.123", "[127.0.0.1]", "[::1", "[zz::1]", "a\u200db.com",
		"-\u00e9", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "com",
	} {
		if got, err := CanonicalHost(in); !errors.Is(err, ErrInvalidHost) {
			t.Errorf("CanonicalHost(%q) = %q, %v; want ErrInvalidHost", in, got, err)
		}
	}
}

// TestOriginInvalidHostReason: Decide refuses a host with no canonical
// spelling with its own reason, without fetching.
func TestOriginInvalidHostReason(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nAllow: /\n"), Config{})
	for _, raw := range []string{"http://127.1/", "http://a..b/", "http://0x7f.1:8080/x"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if d := v.e.Decide(t.Context(), u, "", DecideOptions{}); d.Allowed || d.Reason != ReasonInvalidHost || d.RobotsStatus != "" {
			t.Errorf("%s: %v %s (robots.txt %q), want refused invalid-host, nothing fetched", raw, d.Allowed, d.Reason, d.RobotsStatus)
		}
	}
}

// hostSpellings returns spellings of the host of one address (index i of a
// fixed list) that all dial the same address, picked by the bits of b:
// letter case, fullwidth letters and digits, a trailing dot, and for IP
// addresses the IPv6 forms of one address (IPv4-mapped, hex or dotted,
// expanded, leading zeros, upper-case).
func hostSpellings(i uint8, b uint64) (ref string, out []string) {
	names := []string{"localhost", "example.com", "bücher.de", "a-b.example"}
	ips := []string{"127.0.0.1", "10.1.2.3", "::1", "2001:db8::42"}
	bit := func() bool { r := b&1 == 1; b = b>>1 | b<<63; return r }
	if int(i)%8 < len(names) {
		n := names[int(i)%8%len(names)]
		ref = n
		for k := 0; k < 6; k++ {
			var s strings.Builder
			for _, r := range n {
				switch {
				case r < 0x80 && unicode.IsLetter(r) && bit():
					r = unicode.ToUpper(r)
				}
				if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) && bit() {
					r += 0xFF01 - 0x21 // fullwidth form
				}
				s.WriteRune(r)
			}
			if bit() {
				s.WriteByte('.')
			}
			out = append(out, s.String())
		}
		return ref, out
	}
	ip := netip.MustParseAddr(ips[int(i)%len(ips)])
	ref = ip.String()
	if ip.Is6() {
		ref = "[" + ref + "]"
	}
	six := ip
	if ip.Is4() {
		out = append(out, ip.String())
		six = netip.AddrFrom16(ip.As16())
	}
	a := six.As16()
	var groups []string
	for g := 0; g < 8; g++ {
		groups = append(groups, strconv.FormatUint(uint64(a[2*g])<<8|uint64(a[2*g+1]), 16))
	}
	for k := 0; k < 4; k++ {
		gs := append([]string(nil), groups...)
		for g := range gs {
			if bit() {
				gs[g] = strings.Repeat("0", 4-len(gs[g])) + gs[g]
			}
			if bit() {
				gs[g] = strings.ToUpper(gs[g])
			}
		}
		out = append(out, "["+strings.Join(gs, ":")+"]")
	}
	out = append(out, "["+six.String()+"]", "["+strings.ToUpper(six.StringExpanded())+"]")
	if ip.Is4() {
		out = append(out, "[::ffff:"+ip.String()+"]", "[::FFFF:"+ip.String()+"]")
	}
	return ref, out
}

// FuzzOrigin: any two spellings that dial the same address and port give
// the same origin key, and an origin is its own canonical spelling.
func FuzzOrigin(f *testing.F) {
	f.Add(uint8(0), uint64(0), uint16(0), false)
	f.Add(uint8(1), uint64(0xdeadbeef), uint16(8080), true)
	f.Add(uint8(2), ^uint64(0), uint16(443), true)
	f.Add(uint8(4), uint64(0x5555), uint16(80), false)
	f.Add(uint8(6), uint64(0xaaaa), uint16(1), false)
	f.Add(uint8(7), uint64(12345), uint16(65535), true)
	f.Fuzz(func(t *testing.T, i uint8, b uint64, port uint16, https bool) {
		scheme, def := "http", "80"
		if https {
			scheme, def = "https", "443"
		}
		ref, hosts := hostSpellings(i, b)
		p := strconv.Itoa(int(port))
		ports := []string{":" + p, ":0" + p, ":00" + p}
		if port == 0 {
			ports = []string{"", ":", ":" + def, ":0" + def}
		}
		want, err := Origin(&url.URL{Scheme: scheme, Host: ref + ports[0]})
		if err != nil {
			t.Fatalf("Origin of %s%s: %v", ref, ports[0], err)
		}
		for k, h := range hosts {
			hp := h + ports[k%len(ports)]
			u, err := url.Parse(scheme + "://" + hp + "/x")
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", hp, err)
			}
			got, err := Origin(u)
			if err != nil || got != want {
				t.Errorf("Origin(%q) = %q, %v; want %q (as %q)", hp, got, err, want, ref)
			}
		}
		u, err := url.Parse(want)
		if err != nil {
			t.Fatalf("origin %q is not a URL: %v", want, err)
		}
		if again, err := Origin(u); err != nil || again != want {
			t.Errorf("Origin(%q) = %q, %v: not a fixed point", want, again, err)
		}
	})
}
