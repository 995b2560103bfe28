package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// A client that leaves while robots.txt is being fetched is neither
// audited as a robots block nor counted as a denial.
func TestClientGoneWhileFetchingRobots(t *testing.T) {
	release := make(chan struct{})
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, privateRobots)
	}, nil)
	defer close(release)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Audit = config.AuditAll }})

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.URL+"/public", nil)
	req.Header.Set("User-Agent", "TestBot/1.0")
	errc := make(chan error, 1)
	go func() {
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	testsupport.WaitFor(t, "the robots.txt fetch", func() bool { return o.robotsHits.Load() == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	m := h.srv.metrics
	testsupport.WaitFor(t, "the request to end", func() bool {
		return testsupport.MetricValue(t, testsupport.Exposition(m.Handler()), "robotsgate_inflight_requests") == 0
	})
	if recs := h.audit.String(); recs != "" {
		t.Errorf("audited: %s", recs)
	}
	exp := testsupport.Exposition(m.Handler())
	if strings.Contains(exp, "client-gone") || strings.Contains(exp, `robotsgate_decisions_total{decision="blocked",reason="robots-unreachable"} 1`) {
		t.Errorf("counted as a decision:\n%s", exp)
	}
	if o.hits.Load() != 0 {
		t.Errorf("the request was forwarded")
	}
}
