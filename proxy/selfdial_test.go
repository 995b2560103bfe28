package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// rawProxyGet sends the raw request line "GET target HTTP/1.1" (with
// Host host) to the proxy at addr over its own connection and returns the
// response with its body read. Go's client would normalise target.
func rawProxyGet(t *testing.T, addr, target, host string) (*http.Response, string) {
	t.Helper()
	return rawRoundTrip(t, addr, "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nUser-Agent: TestBot/1.0\r\nConnection: close\r\n\r\n")
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

// selfRefusal is the refusal a request to robotsgate itself spelled hp
// gets: 403 self-request, or, for an IPv4 shorthand (which robotsgate
// refuses before anything else, as its address depends on the resolver),
// 400 invalid-host. Either way nothing is dialed.
func selfRefusal(hp string) (int, enforce.Reason) {
	host, _, _ := net.SplitHostPort(hp)
	switch host {
	case "0x7f.1", "2130706433", "127.1", "0177.0.0.1", "0":
		return http.StatusBadRequest, enforce.ReasonInvalidHost
	}
	return http.StatusForbidden, answer.ReasonSelfRequest
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
			if code, reason := selfRefusal(hp); resp.StatusCode != code || resp.Header.Get(answer.HeaderDecision) != string(reason) {
				t.Errorf("GET http://%s/metrics through the proxy: %d %s %.80q, want %d %s",
					hp, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body, code, reason)
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
	p := startSelfProxy(t, reportTunnelToAdmin)
	_, adminPort, _ := net.SplitHostPort(p.adminAddr)
	for _, hp := range selfSpellings(adminPort) {
		resp, c, _ := rawConnect(t, p.addr, hp, "User-Agent: TestBot/1.0")
		c.Close()
		if code, reason := selfRefusal(hp); resp.StatusCode != code || resp.Header.Get(answer.HeaderDecision) != string(reason) {
			t.Errorf("CONNECT %s: %d %s, want %d %s", hp, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), code, reason)
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
	srv.self.Add("192.0.2.7:" + originPort)
	res := &rebindResolver{name: "rebind.test", first: netip.MustParseAddr("127.0.0.1"), later: netip.MustParseAddr("192.0.2.7")}
	srv.self.Lookup = res.lookup
	addr := serveLoopback(t, srv)

	resp, body := rawProxyGet(t, addr, "http://rebind.test:"+originPort+"/x", "rebind.test:"+originPort)
	if resp.StatusCode != 200 || body != "page /x" {
		t.Fatalf("GET http://rebind.test:%s/x: %d %q, want the origin's page", originPort, resp.StatusCode, body)
	}
	if n := res.lookups(); n != 1 {
		t.Errorf("rebind.test looked up %d times, want once", n)
	}
	// A later request checks the new address, and is refused.
	resp, _ = rawProxyGet(t, addr, "http://rebind.test:"+originPort+"/y", "rebind.test:"+originPort)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonSelfRequest) {
		t.Errorf("after re-pointing: %d %s, want 403 self-request", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	if n := o.hits.Load(); n != 1 {
		t.Errorf("the origin got %d requests, want 1", n)
	}
}
