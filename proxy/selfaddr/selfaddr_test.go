package selfaddr

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// TestSelfAddrsMatches: an unspecified listener stands for every local
// address on its port; other ports and foreign addresses do not match.
// (No address here is dialed.)
func TestSelfAddrsMatches(t *testing.T) {
	var any, lo, one Set
	any.Add("0.0.0.0:9310")
	lo.Add("127.0.0.1:9309")
	one.Add("192.0.2.7:9311")
	ctx := context.Background()
	for _, tc := range []struct {
		a          *Set
		host, port string
		want       bool
	}{
		{&any, "127.0.0.1", "9310", true},
		{&any, "127.1.2.3", "9310", true},
		{&any, "::1", "9310", true},
		{&any, "::ffff:127.0.0.1", "9310", true},
		{&any, "localhost", "9310", true},
		{&any, "foo.localhost.", "9310", true},
		{&any, "0.0.0.0", "9310", true},
		{&any, "127.0.0.1", "9309", false},
		{&any, "192.0.2.1", "9310", false}, // TEST-NET-1: not a local address
		{&lo, "127.0.0.1", "9309", true},
		{&lo, "[::1]", "9309", true},
		{&lo, "192.0.2.1", "9309", false},
		{&one, "192.0.2.7", "9311", true},
		{&one, "192.0.2.8", "9311", false},
		{&one, "0.0.0.0", "9311", true},
	} {
		port, _ := ParsePort(tc.port)
		if _, got := tc.a.Check(ctx, tc.host, port); got != tc.want {
			t.Errorf("%v matches(%s, %s) = %v, want %v", tc.a.ports, tc.host, tc.port, got, tc.want)
		}
	}
	// Every interface address of this host is "self" for an unspecified
	// listener.
	for _, ip := range interfaceAddrs() {
		if _, self := any.Check(ctx, ip.String(), 9310); !self {
			t.Errorf("interface address %s not matched by 0.0.0.0:9310", ip)
		}
	}
}

func TestDestHostPort(t *testing.T) {
	for _, tc := range []struct {
		in, scheme, host string
		port             uint16
		ok               bool
	}{
		{"example.com", "http", "example.com", 80, true},
		{"Example.COM", "https", "example.com", 443, true},
		{"example.com:8080", "https", "example.com", 8080, true},
		{"example.com:", "https", "example.com", 443, true},
		{"[::1]:8443", "https", "::1", 8443, true},
		{"[::1]", "http", "::1", 80, true},
		{"127.0.0.1:9310", "http", "127.0.0.1", 9310, true},
		{"127.0.0.1:009310", "http", "127.0.0.1", 9310, true},
		{"127.0.0.1:", "http", "127.0.0.1", 80, true},
		{"127.0.0.1:+80", "http", "127.0.0.1", 0, false},
		{"127.0.0.1:80 ", "http", "127.0.0.1", 0, false},
		{"127.0.0.1:65536", "http", "127.0.0.1", 0, false},
		{"127.0.0.1:0", "http", "127.0.0.1", 0, false},
	} {
		if h, p, ok := DestHostPort(tc.in, tc.scheme); h != tc.host || p != tc.port || ok != tc.ok {
			t.Errorf("DestHostPort(%q, %s) = %q, %d, %v; want %q, %d, %v", tc.in, tc.scheme, h, p, ok, tc.host, tc.port, tc.ok)
		}
	}
}

// TestSelfDialer: the transport's dialer itself (used also by robots.txt
// fetches and tunnels) refuses robotsgate's addresses on its ports,
// dials a pinned address instead of the name, refuses ports the system
// dialer would read leniently, and leaves other ports alone.
func TestSelfDialer(t *testing.T) {
	var a Set
	a.Add("127.0.0.1:9309")
	a.Add("0.0.0.0:80")
	var dialed []string
	next := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, errors.New("test dialer")
	}
	dial := a.Dialer(next)
	ctx := context.Background()
	for _, addr := range []string{"localhost:9309", "127.0.0.1:09309", "0x7f.1:9309", "[::ffff:127.0.0.1]:9309", "127.0.0.1:80", "0:80"} {
		if _, err := dial(ctx, "tcp", addr); !errors.Is(err, ErrSelfDial) {
			t.Errorf("dial %s: %v, want the self-dial error", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:+9309", "127.0.0.1:9309 ", "127.0.0.1:", "127.0.0.1:70000"} {
		if _, err := dial(ctx, "tcp", addr); err == nil || !strings.Contains(err.Error(), "invalid port") {
			t.Errorf("dial %q: %v, want invalid port", addr, err)
		}
	}
	if len(dialed) != 0 {
		t.Fatalf("dialed %v", dialed)
	}
	pinned := WithPin(ctx, &Pin{host: "name.test", port: 9309, ips: []netip.Addr{netip.MustParseAddr("192.0.2.1")}})
	dial(pinned, "tcp", "NAME.test:09309")
	dial(ctx, "tcp", "example.test:8080") // not a listener port: untouched
	if want := []string{"192.0.2.1:9309", "example.test:8080"}; strings.Join(dialed, " ") != strings.Join(want, " ") {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
	// A pin without addresses (the name did not resolve) dials nothing.
	none := WithPin(ctx, &Pin{host: "gone.test", port: 9309})
	if _, err := dial(none, "tcp", "gone.test:9309"); err == nil || len(dialed) != 2 {
		t.Errorf("dial with an empty pin: %v, dialed %v", err, dialed)
	}
}

// TestSelfDefaultPort: a URL without a port (or with an empty one) goes
// to the scheme's default port, which robotsgate may listen on.
func TestSelfDefaultPort(t *testing.T) {
	var a Set
	a.Add(":80")
	for _, hp := range []string{"127.0.0.1", "127.0.0.1:", "localhost", "[::1]:"} {
		host, port, ok := DestHostPort(hp, "http")
		if _, self := a.Check(context.Background(), host, port); !ok || !self {
			t.Errorf("http://%s/ with robotsgate on :80: port %d ok %v self %v, want self", hp, port, ok, self)
		}
	}
}

func TestParseIPv4Shorthand(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"10.0x10.010.1", "10.16.8.1"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.1", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"08.1", ""}, // 8 is not an octal digit
		{"example.com", ""},
		{"1e3", ""},
		{"", ""},
	} {
		ip, ok := parseIPv4Shorthand(tc.in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tc.want {
			t.Errorf("parseIPv4Shorthand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, ok := parseIPv4Shorthand(strings.Repeat("9", 50)); ok {
		t.Error("a 50-digit number parsed")
	}
}
