package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// dialLog records every address robotsgate's transports dial; only
// loopback addresses are really dialled (the tests have no other network).
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (l *dialLog) dialled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.addrs)
}

// wrap returns build with its transport's dials recorded in l.
func (l *dialLog) wrap(build func(config.Config) (*http.Transport, error)) func(config.Config) *http.Transport {
	return func(cfg config.Config) *http.Transport {
		tr, err := build(cfg)
		if err != nil {
			panic(err)
		}
		inner := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			l.mu.Lock()
			l.addrs = append(l.addrs, addr)
			l.mu.Unlock()
			if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().Unmap().IsLoopback() {
				return nil, errors.New("test: no route to " + addr)
			}
			return inner(ctx, network, addr)
		}
		return tr
	}
}

// countingServer starts a server on ip (a loopback address) answering
// h, or 200 "reached", counting its requests.
func countingServer(t *testing.T, ip string, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") }
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

// openListen makes cfg listen beyond loopback, with the credentials and
// client networks that requires: egress.private then defaults to deny.
func openListen(cfg *config.Config) {
	cfg.Listen = "0.0.0.0:9309"
	cfg.Auth.Credentials = []string{"crawler:secret"}
	cfg.Auth.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.AdminToken = "test-admin-token"
}

// egressHarness is a harness with openListen (when open) and cfg's
// changes, names resolved by lookup, dials recorded in the returned log,
// and a client with the credentials.
func egressHarness(t *testing.T, open bool, change func(*config.Config), lookup map[string]string) (*harness, *dialLog) {
	t.Helper()
	dl := &dialLog{}
	h := newHarness(t, harnessOpts{
		config: func(c *config.Config) {
			if open {
				openListen(c)
			}
			if change != nil {
				change(c)
			}
		},
		transport:       dl.wrap(NewTransport),
		policyTransport: dl.wrap(NewPolicyTransport),
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if a, ok := lookup[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
	})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("crawler", "secret"), Host: h.addr}),
		DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	h.client = &http.Client{Transport: tr, Timeout: testTimeout}
	return h, dl
}

// wantDestinationPrivate checks that resp is robotsgate's 403
// destination-private, audited, and that no dial went to any of addrs.
func wantDestinationPrivate(t *testing.T, h *harness, dl *dialLog, resp *http.Response, body string, addrs ...string) {
	t.Helper()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "destination-private" {
		t.Fatalf("got %d %q, want 403 destination-private; body %q", resp.StatusCode, resp.Header.Get(answer.HeaderDecision), body)
	}
	if ps := resp.Header.Get(answer.HeaderProxyStatus); !strings.Contains(ps, "error=destination_ip_prohibited") {
		t.Errorf("Proxy-Status %q, want destination_ip_prohibited", ps)
	}
	h.audit.Find(t, "destination-private")
	for _, d := range dl.dialled() {
		for _, a := range addrs {
			if d == a {
				t.Errorf("dialled %s", d)
			}
		}
	}
}

// TestEgressOpenListen: a proxy listening beyond loopback refuses, 403
// destination-private and without a connection, a loopback origin,
// cloud metadata in its spellings, a name that resolves to a private
// address, and a public origin's robots.txt redirect into loopback.
func TestEgressOpenListen(t *testing.T) {
	local, localHits := countingServer(t, "127.0.0.1", nil)
	localAddr := strings.TrimPrefix(local.URL, "http://")
	public, publicHits := countingServer(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, local.URL+"/robots.txt", http.StatusFound)
			return
		}
		fmt.Fprint(w, "public page")
	})
	allowPublic := func(c *config.Config) { c.Egress.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")} }
	for _, tc := range []struct {
		name, url string
		never     []string
	}{
		{"loopback origin", local.URL + "/", []string{localAddr}},
		{"metadata", "http://169.254.169.254/latest/meta-data/", []string{"169.254.169.254:80"}},
		{"metadata mapped", "http://[::ffff:169.254.169.254]/latest/meta-data/", []string{"[::ffff:169.254.169.254]:80", "169.254.169.254:80"}},
		{"metadata nat64", "http://[64:ff9b::a9fe:a9fe]/", []string{"[64:ff9b::a9fe:a9fe]:80"}},
		{"name resolving to rfc1918", "http://intranet.example/admin", []string{"10.0.0.1:80"}},
		{"public origin redirecting robots.txt into loopback", public.URL + "/page", []string{localAddr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, dl := egressHarness(t, true, allowPublic, map[string]string{"intranet.example": "10.0.0.1"})
			before := localHits.Load()
			resp, body := h.get(t, tc.url)
			wantDestinationPrivate(t, h, dl, resp, body, tc.never...)
			if n := localHits.Load() - before; n != 0 {
				t.Errorf("the loopback server got %d requests", n)
			}
		})
	}
	if n := publicHits.Load(); n != 1 { // its robots.txt, never the page
		t.Errorf("the public origin got %d requests, want 1 (robots.txt)", n)
	}
}

// TestEgressConnect: a CONNECT to a metadata or loopback address is
// refused before anything is dialled, in both HTTPS modes.
func TestEgressConnect(t *testing.T) {
	for _, mode := range []config.HTTPSMode{config.HTTPSModeMITM, config.HTTPSModeTunnel} {
		for _, target := range []string{"169.254.169.254:443", "[::ffff:127.0.0.1]:443", "127.0.0.1:443"} {
			t.Run(string(mode)+" "+target, func(t *testing.T) {
				h, dl := egressHarness(t, true, func(c *config.Config) { c.HTTPS.Mode = mode }, nil)
				resp, _, _ := rawConnect(t, h.addr, target, "Proxy-Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("crawler:secret")))
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "destination-private" {
					t.Fatalf("got %d %q, want 403 destination-private", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
				}
				if d := dl.dialled(); len(d) != 0 {
					t.Errorf("dialled %v", d)
				}
			})
		}
	}
}

// TestEgressPublicOriginFetches: where private destinations are allowed
// (loopback listen), a public origin's policy fetches still never
// follow a robots.txt redirect or a License line into a private address.
func TestEgressPublicOriginFetches(t *testing.T) {
	local, localHits := countingServer(t, "127.0.0.1", nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(local.URL, "http://"))
	byName := "http://rebind.example:" + port
	for _, tc := range []struct {
		name, robots string
		redirect     string
		wantStatus   int
	}{
		{"robots.txt redirect", "", local.URL, http.StatusForbidden},
		{"robots.txt redirect to a name", "", byName, http.StatusForbidden},
		{"license line", "User-agent: *\nAllow: /\nLicense: " + local.URL + "/license.xml\n", "", 0},
		{"license line naming a name", "User-agent: *\nAllow: /\nLicense: " + byName + "/license.xml\n", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			public, _ := countingServer(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/robots.txt" && tc.redirect != "":
					http.Redirect(w, r, tc.redirect+"/robots.txt", http.StatusMovedPermanently)
				case r.URL.Path == "/robots.txt":
					fmt.Fprint(w, tc.robots)
				default:
					fmt.Fprint(w, "public page")
				}
			})
			h, dl := egressHarness(t, false, func(c *config.Config) {
				c.Egress.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
				c.License.Mode = config.LicenseEnforce
				c.Purposes = aipref.SetOf(aipref.TrainAI)
			}, map[string]string{"rebind.example": "127.0.0.1"})
			before := localHits.Load()
			resp, body := h.get(t, public.URL+"/page")
			if tc.wantStatus != 0 {
				wantDestinationPrivate(t, h, dl, resp, body)
			}
			if n := localHits.Load() - before; n != 0 {
				t.Errorf("the loopback server got %d requests", n)
			}
		})
	}
	// A loopback origin itself is reached on a loopback listen address.
	h, _ := egressHarness(t, false, nil, nil)
	if resp, body := h.get(t, local.URL+"/"); resp.StatusCode != http.StatusOK || body != "reached" {
		t.Errorf("loopback origin on a loopback proxy: %d %q", resp.StatusCode, body)
	}
}

// TestEgressTransparentDestination: a redirected connection whose
// original destination the egress policy forbids is refused for every
// request on it (connRefusal), whatever its Host or SNI says.
func TestEgressTransparentDestination(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name string
		open bool
		dst  string
		want string // "" = not refused
	}{
		{"metadata on loopback listen", false, "169.254.169.254:80", "destination-private"},
		{"mapped metadata on loopback listen", false, "[::ffff:169.254.169.254]:443", "destination-private"},
		{"rfc1918 on loopback listen", false, "10.0.0.5:80", ""},
		{"rfc1918 on open listen", true, "10.0.0.5:80", "destination-private"},
		{"public on open listen", true, "93.184.215.14:443", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := egressHarness(t, tc.open, func(c *config.Config) { c.Transparent.Listen = "127.0.0.1:0" }, nil)
			o := h.srv.connRefusal(c, netip.MustParseAddrPort(tc.dst), nil)
			switch {
			case tc.want == "" && o != nil:
				t.Errorf("refused: %+v", *o.d)
			case tc.want != "" && (o == nil || string(o.d.Reason) != tc.want):
				t.Errorf("got %+v, want %s", o, tc.want)
			}
		})
	}
}
