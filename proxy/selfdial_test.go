package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
)

// rawProxyGet sends the raw request line "GET target HTTP/1.1" (with
// Host host) to the proxy at addr over its own connection and returns the
// response with its body read. Go's client would normalise target.
func rawProxyGet(t *testing.T, addr, target, host string) (*http.Response, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// selfSpellings are spellings of robotsgate's loopback address with port
// (as digits), each of which the dialer (or a browser's URL parser)
// resolves to a loopback or unspecified address on that port.
func selfSpellings(port string) []string {
	return []string{
		"127.0.0.1:0" + port, // leading zeros in the port
		"127.0.0.1:000" + port,
		"0x7f.1:" + port,     // IPv4 shorthands
		"2130706433:" + port, // 127.0.0.1 as one number
		"127.1:" + port,
		"0177.0.0.1:" + port,
		"0:" + port, // 0.0.0.0
		"[::ffff:127.0.0.1]:" + port,
		"[::ffff:7f00:1]:" + port,
		"[::1]:0" + port,
		"[::1%25lo]:" + port, // with a zone
		"LOCALHOST.:" + port,
		"localhost.:0" + port,
		"127.0.0.1.:" + port, // trailing dot
		"0.0.0.0:" + port,
	}
}

// TestSelfRequestSpellings: whatever the spelling of the host and port,
// a request to robotsgate's own admin or proxy listener is refused with
// 403. Before the fix a port with leading zeros ("0<port>") reached the
// admin API, and the IPv4 shorthands were looked up in DNS.
func TestSelfRequestSpellings(t *testing.T) {
	p := startSelfProxy(t, nil)
	_, adminPort, _ := net.SplitHostPort(p.adminAddr)
	_, proxyPort, _ := net.SplitHostPort(p.addr)
	for _, port := range []string{adminPort, proxyPort} {
		for _, hp := range selfSpellings(port) {
			resp, body := rawProxyGet(t, p.addr, "http://"+hp+"/metrics", hp)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(ReasonSelfRequest) {
				t.Errorf("GET http://%s/metrics through the proxy: %d %s %.80q, want 403 self-request",
					hp, resp.StatusCode, resp.Header.Get(HeaderDecision), body)
			}
		}
	}
}

// TestSelfConnectSpellings: a CONNECT to robotsgate's admin port spelled
// in any way is refused as a self request, although https.allowed_ports
// lets the port through and report mode would open a tunnel. Before the
// fix "0<port>" was refused only as a port outside the allow-list, and
// the IPv4 shorthands were not recognised.
func TestSelfConnectSpellings(t *testing.T) {
	p := startSelfProxy(t, func(c *config.Config, adminPort int) {
		c.Mode = ModeReport
		c.HTTPS.Mode = HTTPSModeTunnel
		c.Agent = "TestBot"
		c.HTTPS.AllowedPorts = []int{443, adminPort}
	})
	_, adminPort, _ := net.SplitHostPort(p.adminAddr)
	for _, hp := range selfSpellings(adminPort) {
		resp, c, _ := rawConnect(t, p.addr, hp, "User-Agent: TestBot/1.0")
		c.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(ReasonSelfRequest) {
			t.Errorf("CONNECT %s: %d %s, want 403 self-request", hp, resp.StatusCode, resp.Header.Get(HeaderDecision))
		}
	}
}

// rebindResolver answers name with first on its first lookup and with
// later on every other one, as a DNS server re-pointing a name would; it
// counts the lookups.
type rebindResolver struct {
	name         string
	first, later netip.Addr
	mu           sync.Mutex
	n            int
}

func (r *rebindResolver) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if host != r.name {
		return nil, errors.New("no such host")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.n == 1 {
		return []netip.Addr{r.first}, nil
	}
	return []netip.Addr{r.later}, nil
}

func (r *rebindResolver) lookups() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// TestSelfCheckDialsCheckedAddress: the destination's name is resolved
// once, by the self-address check, and the request (and its robots.txt
// fetch) connects to the address that was checked: a name re-pointed at
// robotsgate after the check does not get through. Before the fix the
// dialer looked the name up again.
func TestSelfCheckDialsCheckedAddress(t *testing.T) {
	o := newOrigin(t, robotsStatus(404), nil)
	_, originPort, _ := net.SplitHostPort(o.Listener.Addr().String())
	cfg := testConfig(t)
	srv, err := buildServer(t, cfg, enforce.Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	// robotsgate "listens" on 192.0.2.7 on the origin's port: the name
	// first resolves to the origin (127.0.0.1), then to robotsgate.
	srv.self.add("192.0.2.7:" + originPort)
	res := &rebindResolver{name: "rebind.test", first: netip.MustParseAddr("127.0.0.1"), later: netip.MustParseAddr("192.0.2.7")}
	srv.self.lookup = res.lookup
	addr := serveForTest(t, srv)

	resp, body := rawProxyGet(t, addr, "http://rebind.test:"+originPort+"/x", "rebind.test:"+originPort)
	if resp.StatusCode != 200 || body != "page /x" {
		t.Fatalf("GET http://rebind.test:%s/x: %d %q, want the origin's page", originPort, resp.StatusCode, body)
	}
	if n := res.lookups(); n != 1 {
		t.Errorf("rebind.test looked up %d times, want once", n)
	}
	// A later request checks the new address, and is refused.
	resp, _ = rawProxyGet(t, addr, "http://rebind.test:"+originPort+"/y", "rebind.test:"+originPort)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDecision) != string(ReasonSelfRequest) {
		t.Errorf("after re-pointing: %d %s, want 403 self-request", resp.StatusCode, resp.Header.Get(HeaderDecision))
	}
	if n := o.hits.Load(); n != 1 {
		t.Errorf("the origin got %d requests, want 1", n)
	}
}

// serveForTest serves srv on a loopback port until the test ends.
func serveForTest(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestSelfDialer: the transport's dialer itself (used also by robots.txt
// fetches and tunnels) refuses robotsgate's addresses on its ports,
// dials a pinned address instead of the name, refuses ports the system
// dialer would read leniently, and leaves other ports alone.
func TestSelfDialer(t *testing.T) {
	var a selfAddrs
	a.add("127.0.0.1:9309")
	a.add("0.0.0.0:80")
	var dialed []string
	next := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, errors.New("test dialer")
	}
	dial := a.selfDialer(next)
	ctx := context.Background()
	for _, addr := range []string{"localhost:9309", "127.0.0.1:09309", "0x7f.1:9309", "[::ffff:127.0.0.1]:9309", "127.0.0.1:80", "0:80"} {
		if _, err := dial(ctx, "tcp", addr); !errors.Is(err, errSelfDial) {
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
	pinned := withDialPin(ctx, &dialPin{host: "name.test", port: 9309, ips: []netip.Addr{netip.MustParseAddr("192.0.2.1")}})
	dial(pinned, "tcp", "NAME.test:09309")
	dial(ctx, "tcp", "example.test:8080") // not a listener port: untouched
	if want := []string{"192.0.2.1:9309", "example.test:8080"}; strings.Join(dialed, " ") != strings.Join(want, " ") {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
	// A pin without addresses (the name did not resolve) dials nothing.
	none := withDialPin(ctx, &dialPin{host: "gone.test", port: 9309})
	if _, err := dial(none, "tcp", "gone.test:9309"); err == nil || len(dialed) != 2 {
		t.Errorf("dial with an empty pin: %v, dialed %v", err, dialed)
	}
}

// TestSelfDefaultPort: a URL without a port (or with an empty one) goes
// to the scheme's default port, which robotsgate may listen on.
func TestSelfDefaultPort(t *testing.T) {
	var a selfAddrs
	a.add(":80")
	for _, hp := range []string{"127.0.0.1", "127.0.0.1:", "localhost", "[::1]:"} {
		host, port, ok := destHostPort(hp, "http")
		if _, self := a.check(context.Background(), host, port); !ok || !self {
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
