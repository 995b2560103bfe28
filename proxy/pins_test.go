package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// One name, several addresses. The attacker's name resolves to its own
// server (permissive robots.txt) and to a victim's address (a robots.txt
// that disallows /private): whatever the resolver and the dialer do, the
// victim's /private must never reach the victim.

const (
	multiName      = "multi.test"
	openRobots     = "User-agent: *\nAllow: /\n"
	victimRobots   = "User-agent: *\nDisallow: /private\n"
	attackerAddr   = "127.0.0.1"
	victimAddrText = "127.0.0.2"
)

// addrOrigin is an origin served on one loopback address, which says in
// each answer who it is and counts what it was asked.
type addrOrigin struct {
	name string
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int // path → requests
}

func (o *addrOrigin) count(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// checkVictimKept fails the test unless the victim's robots.txt (fetched
// once) decided /private/b, which never reached the victim, and /public,
// requested of the victim, never reached the attacker.
func checkVictimKept(t *testing.T, victim, attacker *addrOrigin) {
	t.Helper()
	if n := victim.count("/private/b"); n != 0 {
		t.Errorf("the victim got /private/b %d times: the attacker's robots.txt decided it", n)
	}
	if n := victim.count("/robots.txt"); n != 1 {
		t.Errorf("the victim's robots.txt fetched %d times, want 1", n)
	}
	if n := attacker.count("/public"); n != 0 {
		t.Errorf("a request for the victim reached the attacker %d times", n)
	}
}

// twoOrigins starts the attacker's origin on 127.0.0.1 and the victim's on
// 127.0.0.2, on one port, and returns them and the port.
func twoOrigins(t *testing.T) (attacker, victim *addrOrigin, port string) {
	return twoOriginsAt(t, victimAddrText)
}

// twoOriginsAt is twoOrigins with the victim on victimIP.
func twoOriginsAt(t *testing.T, victimIP string) (attacker, victim *addrOrigin, port string) {
	t.Helper()
	for range 20 {
		a := newAddrOrigin(t, "attacker", attackerAddr+":0", openRobots)
		_, port, _ = net.SplitHostPort(a.srv.Listener.Addr().String())
		if v := newAddrOrigin(t, "victim", net.JoinHostPort(victimIP, port), victimRobots); v != nil {
			return a, v, port
		}
		a.srv.Close()
	}
	t.Skip("no port free on both 127.0.0.1 and 127.0.0.2")
	return nil, nil, ""
}

// newAddrOrigin serves an origin on addr, nil when addr cannot be listened on.
func newAddrOrigin(t *testing.T, name, addr, robots string) *addrOrigin {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if strings.HasSuffix(addr, ":0") {
			t.Skipf("listen %s: %v", addr, err)
		}
		return nil
	}
	o := &addrOrigin{name: name, hits: map[string]int{}}
	o.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	})}}
	o.srv.Start()
	t.Cleanup(o.srv.Close)
	return o
}

// fakeDNS answers names from a table that a test changes; its dialer
// resolves names as Go's does (each address in turn, the next when one
// refuses), and passes addresses through.
type fakeDNS struct {
	mu    sync.Mutex
	table map[string][]netip.Addr
}

func (d *fakeDNS) set(name string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.table == nil {
		d.table = map[string][]netip.Addr{}
	}
	d.table[name] = nil
	for _, a := range addrs {
		d.table[name] = append(d.table[name], netip.MustParseAddr(a))
	}
}

func (d *fakeDNS) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ips, ok := d.table[host]; ok {
		return ips, nil
	}
	return nil, errors.New("no such host " + host)
}

func (d *fakeDNS) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var nd net.Dialer
	if _, err := netip.ParseAddr(host); err == nil {
		return nd.DialContext(ctx, network, addr)
	}
	ips, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if c, err1 := nd.DialContext(ctx, network, net.JoinHostPort(ip.String(), port)); err1 == nil {
			return c, nil
		} else if err == nil {
			err = err1
		}
	}
	return nil, fmt.Errorf("dial %s: %w", addr, err)
}

// transport returns a transport built by newTr whose dialer is d's.
func (d *fakeDNS) transport(t *testing.T, newTr func(config.Config) (*http.Transport, error)) func(config.Config) *http.Transport {
	return func(cfg config.Config) *http.Transport {
		tr, err := newTr(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.DialContext = d.dial
		return tr
	}
}

// dnsHarness is a harness whose Server resolves and dials with dns.
func dnsHarness(t *testing.T, dns *fakeDNS, cfgf func(*config.Config)) *harness {
	return newHarness(t, harnessOpts{transport: dns.transport(t, NewTransport), policyTransport: dns.transport(t, NewPolicyTransport),
		lookup: dns.lookup, config: cfgf})
}

// TestOneNameSeveralAddressesNoFallback: the forward proxy fetches
// robots.txt from the address it pins the name to, and sends the
// request there or nowhere: when the attacker's address stops answering
// after its permissive robots.txt was read, the request is not sent to
// the victim's address (Go's dialer would try the name's next address).
// Before the fix the request reached the victim's /private.
func TestOneNameSeveralAddressesNoFallback(t *testing.T) {
	t.Run("IPv4", func(t *testing.T) { testNoFallback(t, victimAddrText) })
	t.Run("IPv4+IPv6", func(t *testing.T) {
		if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
			t.Skipf("no IPv6 loopback: %v", err)
		} else {
			ln.Close()
		}
		testNoFallback(t, "::1")
	})
}

func testNoFallback(t *testing.T, victimIP string) {
	attacker, victim, port := twoOriginsAt(t, victimIP)
	dns := &fakeDNS{}
	dns.set(multiName, attackerAddr, victimIP)
	h := dnsHarness(t, dns, nil)
	base := "http://" + multiName + ":" + port

	if resp, body := h.get(t, base+"/page"); resp.StatusCode != 200 || body != "attacker /page" {
		t.Fatalf("GET /page: %d %q, want the attacker's page", resp.StatusCode, body)
	}
	attacker.srv.CloseClientConnections()
	attacker.srv.Listener.Close() // the attacker's address stops answering
	for range 3 {
		resp, body := h.get(t, base+"/private/x")
		if resp.StatusCode == 200 {
			t.Errorf("GET /private/x: 200 %q", body)
		}
	}
	if n := victim.count("/private/x"); n != 0 {
		t.Fatalf("the victim got /private/x %d times: the attacker's robots.txt decided a request to the victim", n)
	}
	// After the failed dial the name is pinned to its other address, whose
	// own robots.txt decides.
	if resp, body := h.get(t, base+"/public"); resp.StatusCode != 200 || body != "victim /public" {
		t.Errorf("GET /public after the failure: %d %q, want the victim's page", resp.StatusCode, body)
	}
}

// TestOneNameSeveralAddressesRobotsPerAddress: when the name the proxy
// pinned moves to another address, that address's own robots.txt
// decides: the victim's /private is refused, its /public served by the
// victim (not by an idle connection to the attacker's address).
func TestOneNameSeveralAddressesRobotsPerAddress(t *testing.T) {
	attacker, victim, port := twoOrigins(t)
	dns := &fakeDNS{}
	dns.set(multiName, attackerAddr)
	h := dnsHarness(t, dns, nil)
	now := time.Now()
	var ahead atomic.Int64
	h.srv.pins.SetClock(func() time.Time { return now.Add(time.Duration(ahead.Load())) })
	base := "http://" + multiName + ":" + port

	if resp, body := h.get(t, base+"/private/a"); resp.StatusCode != 200 || body != "attacker /private/a" {
		t.Fatalf("GET /private/a: %d %q, want the attacker's page", resp.StatusCode, body)
	}
	dns.set(multiName, victimAddrText) // the name moves; the old pin expires
	ahead.Store(int64(2 * upstream.PinLifetime))
	resp, body := h.get(t, base+"/public")
	if resp.StatusCode != 200 || body != "victim /public" {
		t.Errorf("GET /public after the move: %d %q, want the victim's page", resp.StatusCode, body)
	}
	if resp, _ := h.get(t, base+"/private/b"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /private/b after the move: %d, want 403 (the victim's robots.txt)", resp.StatusCode)
	}
	checkVictimKept(t, victim, attacker)
}

// redirectedHarness is a dnsHarness with two transparent listeners, the
// connections of each taken as redirected to dst[i].
func redirectedHarness(t *testing.T, dns *fakeDNS, dsts ...string) (*harness, []string) {
	h := dnsHarness(t, dns, func(c *config.Config) { c.Transparent.Listen = "127.0.0.1:0" })
	byListener := map[string]netip.AddrPort{}
	var lns []net.Listener
	for _, d := range dsts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		byListener[ln.Addr().String()] = netip.MustParseAddrPort(d)
		lns = append(lns, ln)
	}
	h.srv.originalDst = func(c net.Conn) (netip.AddrPort, error) { return byListener[c.LocalAddr().String()], nil }
	var addrs []string
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Add(1)
		go func() { defer wg.Done(); h.srv.ServeTransparent(ln) }()
		addrs = append(addrs, ln.Addr().String())
	}
	t.Cleanup(func() { shutdown(t, h.srv); wg.Wait() })
	return h, addrs
}

// redirectedGet sends GET path with Host host on a new connection to the
// transparent listener at addr and returns the status and body.
func redirectedGet(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestTransparentOneNameSeveralAddresses: on the transparent listener the
// client chooses the address. A connection to the attacker's address
// and one to the victim's, with the same Host, are each decided by the
// robots.txt of their own address, and each request leaves on a
// connection to its own address (never an idle one to the other). Before
// the fix the second was decided on the attacker's copy, cached for the
// name, and its allowed request was sent on the idle connection to the
// attacker.
func TestTransparentOneNameSeveralAddresses(t *testing.T) {
	attacker, victim, port := twoOrigins(t)
	dns := &fakeDNS{}
	dns.set(multiName, attackerAddr, victimAddrText)
	_, addrs := redirectedHarness(t, dns, attackerAddr+":"+port, victimAddrText+":"+port)
	host := multiName + ":" + port

	if code, body := redirectedGet(t, addrs[0], host, "/private/a"); code != 200 || body != "attacker /private/a" {
		t.Fatalf("to the attacker's address: %d %q", code, body)
	}
	if code, body := redirectedGet(t, addrs[1], host, "/public"); code != 200 || body != "victim /public" {
		t.Errorf("GET /public to the victim's address: %d %q, want the victim's page", code, body)
	}
	if code, _ := redirectedGet(t, addrs[1], host, "/private/b"); code != http.StatusForbidden {
		t.Errorf("GET /private/b to the victim's address: %d, want 403", code)
	}
	checkVictimKept(t, victim, attacker)
}

// TestPinnedNameOverTLS: a name pinned to an address is dialled there
// with TLS for the name (its certificate is verified for the name, not
// for the pool's key), and HTTP/2 is still negotiated with an origin that
// offers it.
func TestPinnedNameOverTLS(t *testing.T) {
	var protos sync.Map // path → proto major
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, victimRobots)
			return
		}
		protos.Store(r.URL.Path, r.ProtoMajor)
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	o.EnableHTTP2 = true
	o.StartTLS()
	t.Cleanup(o.Close)
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	cfg := mitmConfig(t, &tlsOrigin{Server: o})
	dns := &fakeDNS{}
	dns.set("example.com", attackerAddr) // httptest's certificate names example.com
	srv, err := buildServer(t, cfg, enforce.Config{}, Deps{
		Transport: dns.transport(t, NewTransport)(cfg), PolicyTransport: dns.transport(t, NewPolicyTransport)(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	srv.self.Lookup = dns.lookup
	p := newHTTPSProxy(t, srv, serveLoopback(t, srv), nil)
	c := p.client(p.ca)
	for _, path := range []string{"/a", "/b", "/private/c"} {
		resp, err := c.Get("https://example.com:" + port + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := 200
		if strings.HasPrefix(path, "/private") {
			want = http.StatusForbidden
		}
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d %q, want %d", path, resp.StatusCode, b, want)
		}
	}
	if v, ok := protos.Load("/a"); !ok || v != 2 {
		t.Errorf("/a reached the origin over HTTP/%v, want HTTP/2", v)
	}
	if _, ok := protos.Load("/private/c"); ok {
		t.Error("/private/c reached the origin")
	}
}
