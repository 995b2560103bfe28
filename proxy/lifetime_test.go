package proxy

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// gatedAudit is a memAudit whose writes wait for release; entered
// receives when a write starts waiting.
type gatedAudit struct {
	memAudit
	entered chan struct{}
	release chan struct{}
}

func (g *gatedAudit) Write(p []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	return g.memAudit.Write(p)
}

// TestShutdownForcedWaitsForAuditRecord: when Shutdown's deadline forces
// the connections closed, a handler still running (here: writing its
// audit record) is waited for, so that the caller closing the audit log
// after Shutdown loses no record.
func TestShutdownForcedWaitsForAuditRecord(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	ga := &gatedAudit{entered: make(chan struct{}, 1), release: make(chan struct{})}
	srv, addr := startServer(t, testConfig(t), enforce.Config{}, Deps{Auditor: audit.New(ga)})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: testTimeout}

	clientErr := make(chan error, 1)
	go func() {
		resp, err := c.Get(o.URL + "/private/x")
		if err == nil {
			resp.Body.Close()
			err = errors.New(resp.Status)
		}
		clientErr <- err
	}()
	select {
	case <-ga.entered: // the handler is writing its record
	case <-time.After(testTimeout):
		t.Fatal("the blocked request was never audited")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown bound has passed: connections are closed at once
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	// The client's connection was closed by the forced shutdown...
	select {
	case err := <-clientErr:
		if err == nil {
			t.Fatal("the client got an answer")
		}
	case <-time.After(testTimeout):
		t.Fatal("the forced shutdown did not close the client's connection")
	}
	// ...and only now can the handler finish writing.
	close(ga.release)
	var err error
	select {
	case err = <-shut:
	case <-time.After(testTimeout):
		t.Fatal("Shutdown did not return")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("forced Shutdown: %v, want the context's error", err)
	}
	// Once Shutdown has returned, the record is there.
	recs := ga.Records(t)
	if len(recs) != 1 || recs[0]["url"] != o.URL+"/private/x" || recs[0]["decision"] != audit.DecisionBlocked {
		t.Fatalf("audit log when Shutdown returned: %v", recs)
	}
	if n := srv.life.InFlight(); n != 0 {
		t.Fatalf("%d handlers counted as running after Shutdown", n)
	}
}

// TestShutdownEndsCrawlDelayWait: a request waiting for its crawl-delay
// slot when Shutdown begins is answered 503 at once and audited (reason
// shutting-down) before Shutdown returns, for plain HTTP and for requests
// inside an MITM session (whose context nothing else cancels).
func TestShutdownEndsCrawlDelayWait(t *testing.T) {
	for _, mitm := range []bool{false, true} {
		name := "plain"
		if mitm {
			name = "mitm"
		}
		t.Run(name, func(t *testing.T) {
			clk := enforcetest.NewClock(politeT0)
			var plainB atomic.Int64
			page := func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/b" {
					plainB.Add(1)
				}
				io.WriteString(w, "ok")
			}
			robots := "User-agent: *\nCrawl-delay: 5\n"
			var (
				base string
				srv  *Server
				sink *memAudit
				c    *http.Client
				hits func() int64
			)
			if mitm {
				o := newTLSOrigin(t, robots)
				cfg := mitmConfig(t, o)
				sink = &memAudit{}
				var addr string
				srv, addr = startServer(t, cfg, enforce.Config{Clock: clk}, Deps{Auditor: audit.New(sink), Clock: clk})
				base = o.URL
				hits = func() int64 { return int64(o.hit("/b")) }
				ca, _ := srv.ca()
				roots := x509.NewCertPool()
				roots.AddCert(ca.Leaf)
				p := &httpsProxy{srv: srv, url: &url.URL{Scheme: "http", Host: addr}, audit: sink}
				c = p.client(roots)
				t.Cleanup(func() { c.Transport.(*http.Transport).CloseIdleConnections() })
			} else {
				o := newOrigin(t, robotsBody(robots), page)
				h := newHarness(t, harnessOpts{clock: clk})
				srv, sink, c, base = h.srv, h.audit, h.client, o.URL
				_ = o
				hits = plainB.Load
			}
			if resp, body := get(t, c, base+"/a"); resp.StatusCode != 200 {
				t.Fatalf("/a: %d %s", resp.StatusCode, body)
			}
			type result struct {
				status   int
				decision string
				err      error
			}
			got := make(chan result, 1)
			go func() {
				req, _ := http.NewRequest(http.MethodGet, base+"/b", nil)
				req.Header.Set("User-Agent", "TestBot/1.0")
				resp, err := c.Do(req)
				if err != nil {
					got <- result{err: err}
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				got <- result{status: resp.StatusCode, decision: resp.Header.Get(answer.HeaderDecision)}
			}()
			testsupport.WaitFor(t, "/b waiting for its slot", func() bool { return clk.Waiters() == 1 })

			shut := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
				defer cancel()
				shut <- srv.Shutdown(ctx)
			}()
			var r result
			select {
			case r = <-got:
			case <-time.After(testTimeout):
				t.Fatal("the waiting request was not answered at shutdown")
			}
			if r.err != nil || r.status != http.StatusServiceUnavailable || r.decision != string(answer.ReasonShuttingDown) {
				t.Fatalf("waiting request at shutdown: %+v, want 503 %s", r, answer.ReasonShuttingDown)
			}
			var err error
			select {
			case err = <-shut:
			case <-time.After(testTimeout):
				t.Fatal("Shutdown did not return")
			}
			if err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			var rec map[string]any
			for _, x := range sink.Records(t) {
				if x["reason"] == string(answer.ReasonShuttingDown) {
					rec = x
				}
			}
			if rec == nil || rec["decision"] != audit.DecisionBlocked || rec["status"] != 503.0 || !strings.HasSuffix(rec["url"].(string), "/b") {
				t.Fatalf("audit record of the waiting request: %v (all: %v)", rec, sink.Records(t))
			}
			if n := hits(); n != 0 {
				t.Fatalf("the origin saw /b %d times", n)
			}
		})
	}
}
