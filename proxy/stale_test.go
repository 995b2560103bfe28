package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestStaleCopyIsReported: a verdict made on an expired copy while it is
// re-fetched says so in the audit record, the 403 (JSON and text) and
// the admin API's decision.
func TestStaleCopyIsReported(t *testing.T) {
	clock := enforcetest.NewClock(time.Now().Truncate(time.Second))
	gate := make(chan struct{})
	var fetched atomic.Bool
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if fetched.Swap(true) {
			<-gate // the re-fetch hangs until the test ends
		}
		io.WriteString(w, privateRobots)
	}, nil)
	h := newHarness(t, harnessOpts{clock: clock, config: func(c *config.Config) { c.Robots.TTL = time.Hour }})
	t.Cleanup(func() { close(gate) })

	if resp, _ := h.get(t, o.URL+"/private"); resp.StatusCode != 403 {
		t.Fatalf("fresh: %d", resp.StatusCode)
	}
	clock.Advance(time.Hour)
	resp, body := h.get(t, o.URL+"/private", "Accept", "application/json")
	var refused struct {
		Robots answer.RobotsJSON `json:"robots"`
	}
	if resp.StatusCode != 403 || json.Unmarshal([]byte(body), &refused) != nil {
		t.Fatalf("stale: %d %s", resp.StatusCode, body)
	}
	if !refused.Robots.Stale || refused.Robots.StaleReason != "revalidating" {
		t.Errorf("403 JSON robots = %+v", refused.Robots)
	}
	if _, text := h.get(t, o.URL+"/private"); !strings.Contains(text, "re-fetched") {
		t.Errorf("403 text does not say the copy is stale:\n%s", text)
	}
	recs := h.audit.Records(t)
	last := recs[len(recs)-1]
	if last["robots_stale"] != true || last["robots_stale_reason"] != "revalidating" || last["robots_status"] != "ok" {
		t.Errorf("audit record: %v", last)
	}
	var d answer.DecisionJSON
	q := "/v1/decision?url=" + url.QueryEscape(o.URL+"/private")
	if code, b := adminDo(t, "GET", "http://"+h.addr, q, "", &d); code != 200 || d.Robots == nil ||
		!d.Robots.Stale || d.Robots.StaleReason != "revalidating" {
		t.Errorf("decision: %d %s", code, b)
	}
}

// TestGzipRobotsTxtThroughProxy: robotsgate's transport passes bodies to
// clients undecoded; a robots.txt the origin sends gzip-compressed,
// unasked, must still be decoded and enforced.
func TestGzipRobotsTxtThroughProxy(t *testing.T) {
	gz := encodeGzip(privateRobots)
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz)
	}, nil)
	h := newHarness(t, harnessOpts{})
	if resp, body := h.get(t, o.URL+"/private/x"); resp.StatusCode != 403 || resp.Header.Get(answer.HeaderDecision) != "disallowed" {
		t.Fatalf("/private/x: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.get(t, o.URL+"/public"); resp.StatusCode != 200 {
		t.Fatalf("/public: %d", resp.StatusCode)
	}
}
