package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/confdirtest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// Helpers shared by the package's tests: configuration, an in-memory
// audit/log sink, and starting a whole Server on a loopback port. The
// harnesses of the test files (newHarness, startHTTPSProxy, startOpsProxy)
// are built on these.

// TestMain fails the run when a test writes robotsgate's CA under the
// user's config dir: every Server in a test gets a data dir in
// t.TempDir() (testConfig).
func TestMain(m *testing.M) {
	os.Exit(confdirtest.Main(m, "robotsgate"))
}

// testTimeout bounds every wait in these tests, so that a bug fails a test
// instead of hanging it. No assertion depends on it.
const testTimeout = 10 * time.Second

// memAudit is the in-memory audit and operator log sink of these tests.
type memAudit = testsupport.Sink

// testConfig returns the default configuration with the CA's data dir in
// a temporary directory of t.
func testConfig(t testing.TB) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.HTTPS.DataDir = t.TempDir()
	return cfg
}

// buildServer returns New(cfg, deps) with what deps lacks filled in: the
// Transport (NewTransport(cfg)); the PolicyTransport (NewPolicyTransport)
// and the Enforcer (enforce.New(ec), ec's Fetcher being an HTTPFetcher on
// the policy transport when nil); the Auditor
// (on a discarded memAudit). deps.Log may stay zero (no logging).
func buildServer(t testing.TB, cfg config.Config, ec enforce.Config, deps Deps) (*Server, error) {
	t.Helper()
	if deps.Transport == nil {
		tr, err := NewTransport(cfg)
		if err != nil {
			t.Fatal(err)
		}
		deps.Transport = tr
	}
	if deps.PolicyTransport == nil && deps.Enforcer == nil && ec.Fetcher == nil {
		ptr, err := NewPolicyTransport(cfg)
		if err != nil {
			t.Fatal(err)
		}
		deps.PolicyTransport = ptr
	}
	if deps.Enforcer == nil {
		var ptr http.RoundTripper = deps.PolicyTransport
		if deps.PolicyTransport != nil { // robotsgate's own fetches signed as cmd/robotsgate signs them
			if deps.FetchSigner == nil {
				deps.FetchSigner = new(signing.Holder)
			}
			ptr = deps.FetchSigner.Transport(deps.PolicyTransport)
		}
		enf, err := enforce.New(robotsSettings(ec, cfg, ptr))
		if err != nil {
			t.Fatal(err)
		}
		deps.Enforcer = enf
	}
	if deps.Auditor == nil {
		deps.Auditor = audit.New(&memAudit{})
	}
	return New(cfg, deps)
}

// robotsSettings returns ec with what it lacks taken from cfg as serve
// passes it (EnforceConfig): the settings, the Store (a MemoryStore of
// cfg's bounds) and the Fetcher (an HTTPFetcher on tr).
func robotsSettings(ec enforce.Config, cfg config.Config, tr http.RoundTripper) enforce.Config {
	r := cfg.Robots
	def := EnforceConfig(cfg, tr, enforce.NewMemoryStore(r.MaxEntries, int64(r.MaxCacheMB)<<20), nil, zerolog.Nop())
	if ec.Fetcher == nil {
		ec.Fetcher = def.Fetcher
	}
	if ec.Store == nil {
		ec.Store = def.Store
	}
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&ec.TTL, def.TTL)
	or(&ec.MinTTL, def.MinTTL)
	or(&ec.UnreachableWindow, def.UnreachableWindow)
	or(&ec.RetryMin, def.RetryMin)
	or(&ec.RetryMax, def.RetryMax)
	or(&ec.FetchTimeout, def.FetchTimeout)
	if ec.MaxBytes == 0 {
		ec.MaxBytes = def.MaxBytes
	}
	return ec
}

// startServer builds a Server (buildServer) and serves it on a free
// loopback port until the test ends (serveLoopback). It returns the Server
// and its address.
func startServer(t testing.TB, cfg config.Config, ec enforce.Config, deps Deps) (*Server, string) {
	t.Helper()
	srv, err := buildServer(t, cfg, ec, deps)
	if err != nil {
		t.Fatal(err)
	}
	return srv, serveLoopback(t, srv)
}

// serveLoopback serves srv on a free loopback port until the test ends;
// then it shuts srv down (bounded by testTimeout), checking that Shutdown
// and Serve return no error, and closes srv's Auditor. It returns the
// address.
func serveLoopback(t testing.TB, srv *Server) string {
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
		srv.audit.Close()
	})
	return ln.Addr().String()
}

// dialRaw opens a TCP connection to addr (the proxy) for a raw-bytes
// exchange, with a deadline of testTimeout; the caller closes it.
func dialRaw(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	return c
}

// rawConnect sends CONNECT target to the proxy at addr, with the extra
// header lines given ("Name: value"), and returns the response (its body
// unread), the connection (closed when the test ends) and its reader.
func rawConnect(t testing.TB, addr, target string, headers ...string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	return testsupport.RawConnect(t, addr, target, headers...)
}

// do sends req with c and returns the response with its body read.
func do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", req.Method, req.URL, err)
	}
	return resp, string(b)
}

// newGet returns a GET request for u with the given headers (name, value
// pairs).
func newGet(t testing.TB, u string, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// get GETs u with c, with the given headers (name, value pairs) and
// User-Agent TestBot/1.0 unless they set one; see do.
func get(t testing.TB, c *http.Client, u string, headers ...string) (*http.Response, string) {
	t.Helper()
	req := newGet(t, u, headers...)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "TestBot/1.0")
	}
	return do(t, c, req)
}

// nopCloser is a WriteCloser whose Close does nothing.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// quietTLSServer is httptest.NewTLSServer whose TLS handshake errors (the
// clients of these tests refuse its certificate on purpose) are not
// printed.
func quietTLSServer(h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = quietLog()
	s.StartTLS()
	return s
}

// startTestServer starts h on loopback, over TLS (quietTLSServer) when
// tlsOn; the server is closed when the test ends.
func startTestServer(t testing.TB, h http.Handler, tlsOn bool) *httptest.Server {
	s := httptest.NewServer
	if tlsOn {
		s = quietTLSServer
	}
	o := s(h)
	t.Cleanup(o.Close)
	return o
}

// quietLog is a logger that discards what it is given.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// originLog is what a test origin saw: its requests per path, and the
// header of the last one. The zero value is ready to use.
type originLog struct {
	mu   sync.Mutex
	hits map[string]int
	last http.Header
}

// saw counts the request r.
func (l *originLog) saw(r *http.Request) { l.record(r, false) }

// sawHeader counts the request r and keeps a copy of its header.
func (l *originLog) sawHeader(r *http.Request) { l.record(r, true) }

func (l *originLog) record(r *http.Request, header bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hits == nil {
		l.hits = make(map[string]int)
	}
	l.hits[r.URL.Path]++
	if header {
		l.last = r.Header.Clone()
	}
}

// hit returns how many requests for path the origin saw.
func (l *originLog) hit(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits[path]
}

// lastHeader returns the header of the last request the origin saw.
func (l *originLog) lastHeader() http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// askDecision asks the admin API of the proxy at addr for the decision
// on u, with the further query q ("&agent=..."), and returns the status
// and the JSON answer.
func askDecision(t *testing.T, addr, u, q string) (int, map[string]any) {
	t.Helper()
	c := &http.Client{Timeout: testTimeout}
	resp, err := c.Get("http://" + addr + "/v1/decision?url=" + url.QueryEscape(u) + q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, m
}

// startUntrustedOrigin starts an HTTPS origin with a self-signed
// certificate that robotsgate does not trust, and a MITM proxy that trusts
// only trusted's and allows the untrusted origin's port.
func startUntrustedOrigin(t *testing.T, trusted *tlsOrigin) (*tlsOrigin, *httpsProxy) {
	t.Helper()
	untrusted := &tlsOrigin{robots: "User-agent: *\nAllow: /\n"}
	untrusted.Server = httptest.NewUnstartedServer(http.HandlerFunc(untrusted.serve))
	untrusted.TLS = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	untrusted.Config.ErrorLog = quietLog()
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	cfg := mitmConfig(t, trusted)
	cfg.HTTPS.AllowedPorts = append(cfg.HTTPS.AllowedPorts, untrusted.port(t))
	return untrusted, startHTTPSProxy(t, cfg)
}
