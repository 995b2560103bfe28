package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

func TestAllowedPassesBodyIntact(t *testing.T) {
	big := make([]byte, 1<<20)
	rand.Read(big)
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(big)
		case "/echo":
			h := sha256.New()
			n, _ := io.Copy(h, r.Body)
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		default:
			w.Header().Set("X-Origin", "yes")
			io.WriteString(w, "hello")
		}
	})
	h := newHarness(t, harnessOpts{})

	resp, body := h.get(t, o.URL+"/public")
	if resp.StatusCode != 200 || body != "hello" || resp.Header.Get("X-Origin") != "yes" {
		t.Fatalf("allowed: got %d %q (X-Origin %q), want 200 hello", resp.StatusCode, body, resp.Header.Get("X-Origin"))
	}
	if d := resp.Header.Get(answer.HeaderDecision); d != "" {
		t.Errorf("allowed response has %s: %q", answer.HeaderDecision, d)
	}

	resp, body = h.get(t, o.URL+"/big")
	if resp.StatusCode != 200 || !bytes.Equal([]byte(body), big) {
		t.Fatalf("1 MiB download: status %d, %d bytes, equal=%v", resp.StatusCode, len(body), bytes.Equal([]byte(body), big))
	}

	// A 1 MiB request body reaches the origin intact.
	presp, err := h.client.Post(o.URL+"/echo", "application/octet-stream", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(presp.Body)
	presp.Body.Close()
	if want := fmt.Sprintf("%d %x", len(big), sha256.Sum256(big)); string(pb) != want {
		t.Fatalf("1 MiB upload: origin saw %q, want %q", pb, want)
	}
	if n := o.robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	if recs := h.audit.Records(t); len(recs) != 0 {
		t.Errorf("audit=blocked wrote %d records for allowed requests: %v", len(recs), recs)
	}
}

func TestResponseStreamedNotBuffered(t *testing.T) {
	checkStreamed(t, "/stream", "", nil)
}

// checkStreamed gets path from an origin that sends "first\n" and, only
// after the client has read it, "second\n" (with Content-Length length
// unless it is empty): a proxy that buffers whole bodies never delivers
// the rest. checkHead, unless nil, checks the response before the body
// is read.
func checkStreamed(t *testing.T, path, length string, checkHead func(*http.Response)) {
	t.Helper()
	firstSeen := make(chan struct{})
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		if length != "" {
			w.Header().Set("Content-Length", length)
		}
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, "second\n")
	})
	h := newHarness(t, harnessOpts{})
	req, _ := http.NewRequest(http.MethodGet, o.URL+path, nil)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if checkHead != nil {
		checkHead(resp)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first piece: %q, %v", line, err)
	}
	close(firstSeen)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest: %q, %v", rest, err)
	}
}

func TestDisallowedNeverLeaves(t *testing.T) {
	o := newOrigin(t, robotsBody("# comment\nUser-agent: *\nDisallow: /private\n"), nil)
	h := newHarness(t, harnessOpts{})

	resp, body := h.get(t, o.URL+"/private/x?q=1")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403; body %q", resp.StatusCode, body)
	}
	if n := o.hits.Load(); n != 0 {
		t.Fatalf("origin saw %d requests, want 0", n)
	}
	if got := resp.Header.Get(answer.HeaderDecision); got != "disallowed" {
		t.Errorf("%s = %q, want disallowed", answer.HeaderDecision, got)
	}
	if got := resp.Header.Get(answer.HeaderRule); got != "Disallow: /private; line 3" {
		t.Errorf("%s = %q", answer.HeaderRule, got)
	}
	if got := resp.Header.Get(answer.HeaderAgent); got != "TestBot" {
		t.Errorf("%s = %q, want TestBot", answer.HeaderAgent, got)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	for _, want := range []string{"agent:    TestBot", "Disallow: /private (line 3)", o.URL + "/private/x?q=1", "disallowed"} {
		if !strings.Contains(body, want) {
			t.Errorf("403 body lacks %q:\n%s", want, body)
		}
	}

	// The client's own /robots.txt is always allowed, even under Disallow: /.
	o2 := newOrigin(t, robotsBody("User-agent: *\nDisallow: /\n"), nil)
	resp, body = h.get(t, o2.URL+"/robots.txt")
	if resp.StatusCode != 200 || !strings.Contains(body, "Disallow: /") {
		t.Fatalf("client GET /robots.txt: %d %q", resp.StatusCode, body)
	}
	resp, _ = h.get(t, o2.URL+"/")
	if resp.StatusCode != http.StatusForbidden || o2.hits.Load() != 0 {
		t.Fatalf("Disallow: / let / through: %d, origin hits %d", resp.StatusCode, o2.hits.Load())
	}
}

func TestRefusalJSON(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/private", "Accept", "text/html;q=0.9, application/json")
	if resp.StatusCode != 403 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got struct {
		Status   int    `json:"status"`
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		URL      string `json:"url"`
		Origin   string `json:"origin"`
		Agent    string `json:"agent"`
		Group    string `json:"group"`
		Rule     string `json:"rule"`
		Line     int    `json:"line"`
		Robots   struct {
			Status     string `json:"status"`
			HTTPStatus int    `json:"http_status"`
		} `json:"robots"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	if got.Status != 403 || got.Decision != "blocked" || got.Reason != "disallowed" || got.URL != o.URL+"/private" || got.Origin != o.URL ||
		got.Agent != "TestBot" || got.Group != "*" || got.Rule != "Disallow: /private" || got.Line != 2 ||
		got.Robots.Status != "ok" || got.Robots.HTTPStatus != 200 {
		t.Fatalf("JSON refusal: %+v", got)
	}
}

func TestReportMode(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Mode = config.ModeReport }})
	resp, body := h.get(t, o.URL+"/private/x")
	if resp.StatusCode != 200 || body != "page /private/x" {
		t.Fatalf("report mode: %d %q, want the origin's page", resp.StatusCode, body)
	}
	if o.hits.Load() != 1 {
		t.Fatalf("origin hits %d, want 1", o.hits.Load())
	}
	if got := resp.Header.Get(answer.HeaderDecision); got != "report-only; disallowed" {
		t.Errorf("%s = %q", answer.HeaderDecision, got)
	}
	h.get(t, o.URL+"/public")
	recs := h.audit.Records(t)
	if len(recs) != 1 {
		t.Fatalf("audit records %v, want exactly the would-be block", recs)
	}
	if r := recs[0]; r["decision"] != "reported" || r["mode"] != "report" || r["reason"] != "disallowed" {
		t.Fatalf("report record: %v", r)
	}
}

func TestAuditRecordContent(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: testbot\nAllow: /\nDisallow: /secret\n"), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Audit = config.AuditAll }})
	h.get(t, o.URL+"/open")
	h.get(t, o.URL+"/secret/1", "User-Agent", "TestBot/9")
	recs := h.audit.Records(t)
	if len(recs) != 2 {
		t.Fatalf("audit=all: %d records, want 2: %v", len(recs), recs)
	}
	if recs[0]["decision"] != "allowed" || recs[0]["reason"] != "allowed" {
		t.Errorf("allowed record: %v", recs[0])
	}
	r := recs[1]
	ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["time"]))
	if err != nil || time.Since(ts) > time.Hour {
		t.Errorf("time %v: %v", r["time"], err)
	}
	client, _ := r["client"].(string)
	if host, _, err := net.SplitHostPort(client); err != nil || host != "127.0.0.1" {
		t.Errorf("client %q", client)
	}
	want := map[string]any{
		"decision": "blocked", "reason": "disallowed", "mode": "enforce", "method": "GET",
		"url": o.URL + "/secret/1", "origin": o.URL, "agent": "TestBot", "group": "testbot",
		"rule": "Disallow: /secret", "line": 3.0, "robots_status": "ok", "robots_http_status": 200.0,
		"status": 403.0,
	}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("record[%q] = %v, want %v", k, r[k], v)
		}
	}
	if age, ok := r["robots_age_s"].(float64); !ok || age < 0 {
		t.Errorf("robots_age_s = %v", r["robots_age_s"])
	}
}

func TestUpstreamErrorIs502(t *testing.T) {
	// robots.txt comes from a live origin; the page request fails because
	// the origin hangs up without answering.
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	})
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/x")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "forwarding to "+o.URL+" failed: EOF") ||
		resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonUpstreamError) {
		t.Fatalf("got %d %q, want 502", resp.StatusCode, body)
	}
}

func TestHealthz(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	resp, err := http.Get("http://" + h.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, b)
	}
}

func TestShutdownWaitsForInFlight(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-time.After(testTimeout):
		}
		io.WriteString(w, "done")
	})
	srv, err := buildServer(t, testConfig(t), enforce.Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})}}

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := client.Get(o.URL + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{string(b), err}
	}()
	<-arrived
	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	go func() { shut <- srv.Shutdown(ctx) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	case r := <-got:
		t.Fatalf("request finished before release: %+v", r)
	case <-served: // Serve returns at once; Shutdown still waits
	}
	close(release)
	if r := <-got; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
