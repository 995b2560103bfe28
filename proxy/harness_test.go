package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// origin is an httptest origin server counting what reaches it.
type origin struct {
	*httptest.Server
	robotsHits atomic.Int64 // GET /robots.txt
	hits       atomic.Int64 // everything else
	mu         sync.Mutex
	lastHeader http.Header
}

// newOrigin starts an origin whose /robots.txt is served by robotsTxt and
// every other path by page (default: "page <path>").
func newOrigin(t *testing.T, robotsTxt, page http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	if page == nil {
		page = func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "page %s", r.URL.Path) }
	}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.robotsHits.Add(1)
			robotsTxt(w, r)
			return
		}
		o.hits.Add(1)
		o.mu.Lock()
		o.lastHeader = r.Header.Clone()
		o.mu.Unlock()
		page(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) header() http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastHeader
}

// robotsBody serves body as robots.txt.
func robotsBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }
}

// robotsStatus answers robots.txt with status.
func robotsStatus(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", status) }
}

// harness is a running Server with its audit log and a client using it.
type harness struct {
	srv    *Server
	addr   string
	audit  *memAudit
	client *http.Client
}

type harnessOpts struct {
	config func(*config.Config)
	clock  enforce.Clock
	hooks  enforce.Hooks
	// transport and policyTransport, when not nil, build the transport
	// of proxied requests (Deps.Transport) and of robots.txt fetches
	// (Deps.PolicyTransport); load is Deps.Load.
	transport, policyTransport func(config.Config) *http.Transport
	load                       func() (config.Config, error)
	// lookup resolves host names for the Server (selfaddr.Set.Lookup),
	// nil for the system resolver.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// newHarness starts a Server on 127.0.0.1 with the default configuration
// (changed by opts.config) and the real enforce stack.
func newHarness(t *testing.T, opts harnessOpts) *harness {
	t.Helper()
	cfg := testConfig(t)
	cfg.Robots.FetchTimeout = 5 * time.Second
	if opts.config != nil {
		opts.config(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	ma := &memAudit{}
	srv, err := buildServer(t, cfg, enforce.Config{
		Clock:        opts.clock,
		Hooks:        opts.hooks,
		TTL:          cfg.Robots.TTL,
		MinTTL:       cfg.Robots.MinTTL,
		RetryMin:     cfg.Robots.RetryMin,
		RetryMax:     cfg.Robots.RetryMax,
		FetchTimeout: cfg.Robots.FetchTimeout,
	}, Deps{Auditor: audit.New(ma), Clock: opts.clock, Load: opts.load,
		Transport: optTransport(opts.transport, cfg), PolicyTransport: optTransport(opts.policyTransport, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	srv.self.Lookup = opts.lookup
	addr := serveLoopback(t, srv)
	ctr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableCompression: true}
	t.Cleanup(ctr.CloseIdleConnections)
	return &harness{
		srv:    srv,
		addr:   addr,
		audit:  ma,
		client: &http.Client{Transport: ctr, Timeout: testTimeout},
	}
}

// optTransport is build(cfg), or nil.
func optTransport(build func(config.Config) *http.Transport, cfg config.Config) *http.Transport {
	if build == nil {
		return nil
	}
	return build(cfg)
}

// get sends a GET for u through the proxy with the given headers
// (name, value pairs) and User-Agent TestBot/1.0 unless they set one, and
// returns the response with its body read.
func (h *harness) get(t *testing.T, u string, headers ...string) (*http.Response, string) {
	t.Helper()
	return get(t, h.client, u, headers...)
}

const privateRobots = "User-agent: *\nDisallow: /private\n"
