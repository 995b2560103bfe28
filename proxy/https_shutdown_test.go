package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

func TestHTTPSShutdownWaitsForMITMRequest(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	origin.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
			// A robot tag: its audit record is written after the
			// response headers arrive, i.e. during the shutdown.
			w.Header().Set("X-Robots-Tag", "noindex")
		}
		origin.serve(w, r)
	})
	p := startHTTPSProxy(t, mitmConfig(t, origin))
	c := p.client(p.ca)
	get(t, c, origin.URL+"/warm") // an idle keep-alive MITM session

	got := make(chan string, 1)
	go func() {
		resp, err := c.Get(origin.URL + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	<-arrived

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shut <- p.srv.Shutdown(ctx)
	}()
	// Wait (bounded) until the tracker drains, then let the origin answer.
	testsupport.WaitFor(t, "Shutdown to reach the hijacked connections", func() bool {
		return p.srv.https.hijacks.Draining()
	})
	close(release)
	var err error
	select {
	case err = <-shut:
	case <-time.After(testTimeout):
		t.Fatal("Shutdown did not return")
	}
	// The moment Shutdown returns (when the caller closes the audit log),
	// the record the in-flight request wrote after its response headers
	// arrived is already in the log.
	recs := p.audit.Records(t)
	if err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	found := false
	for _, r := range recs {
		if strings.HasSuffix(fmt.Sprint(r["url"]), "/slow") && r["reason"] == string(answer.ReasonRobotTag) {
			found = true
		}
	}
	if !found {
		t.Fatalf("when Shutdown returned, no robot-tag record of the in-flight request: %v", recs)
	}
	if r := <-got; r != "200 hello from /slow" {
		t.Fatalf("in-flight request: %s", r)
	}
	if n := p.srv.https.hijacks.Active(); n != 0 {
		t.Fatalf("%d hijacked connections left after Shutdown", n)
	}
}

// TestHTTPSShutdownDeadlineCancelsMITMRequest: when Shutdown's deadline
// has passed, the upstream round trip of a request inside an MITM session
// (whose context neither net/http nor goproxy cancels) is cut short, so
// that Shutdown need not wait out its grace period for it, and the
// request is no longer counted as running when Shutdown returns.
func TestHTTPSShutdownDeadlineCancelsMITMRequest(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	originGaveUp := make(chan struct{}, 1)
	origin := newTLSOrigin(t, "User-agent: *\nAllow: /\n")
	origin.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done(): // robotsgate dropped the upstream request
				originGaveUp <- struct{}{}
			case <-release:
			}
			return
		}
		origin.serve(w, r)
	})
	p := startHTTPSProxy(t, mitmConfig(t, origin))
	c := p.client(p.ca)
	go func() {
		if resp, err := c.Get(origin.URL + "/hang"); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(testTimeout):
		t.Fatal("the request never reached the origin")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed: connections are closed at once
	shut := make(chan error, 1)
	go func() { shut <- p.srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-shut:
	case <-time.After(testTimeout):
		t.Fatal("Shutdown did not return")
	}
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "still running") {
		t.Fatalf("forced Shutdown: %v, want only the context's error", err)
	}
	select {
	case <-originGaveUp:
	case <-time.After(testTimeout):
		t.Fatal("the upstream request was not cancelled")
	}
	if n := p.srv.life.InFlight(); n != 0 {
		t.Fatalf("%d handlers counted as running after Shutdown", n)
	}
}
