package status

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit"
)

// TestBoardBoundedInBytes: records with huge client texts are kept cut;
// the recent records stay within recentBudget; a stream that reads
// nothing is dropped before it holds more than subscriberBudget, while
// one that reads stays.
func TestBoardBoundedInBytes(t *testing.T) {
	clk := &fakeNow{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b := New(clk.now)
	idle, _ := b.Subscribe()
	reading, _ := b.Subscribe()
	huge := strings.Repeat("a", 1<<20)
	e := audit.Event{Decision: audit.DecisionBlocked, Reason: "disallowed", Origin: "http://" + huge,
		URL: "http://a.test/" + huge, Agent: huge, Rule: "Disallow: /" + huge, User: huge}
	for i := range subscriberBuffer {
		b.Publish(e)
		for len(reading.Items()) > 0 {
			it := <-reading.Items()
			reading.took(&it)
		}
		if held := idle.held.Load(); held > subscriberBudget {
			t.Fatalf("after %d records the idle stream holds %d bytes, more than %d", i+1, held, subscriberBudget)
		}
	}
	select {
	case <-idle.gone:
	default:
		t.Error("the idle stream was not dropped")
	}
	select {
	case <-reading.gone:
		t.Error("the reading stream was dropped")
	default:
	}
	s := b.Snapshot(1)
	if s.HeldBytes > recentBudget+subscriberBudget {
		t.Errorf("the board holds %d bytes", s.HeldBytes)
	}
	last := s.Recent[len(s.Recent)-1]
	if it := itemOf(&e, clk.t); last.size() != it.size() || len(last.URL) > itemURLBytes+3 || !strings.HasSuffix(last.Agent, "...") {
		t.Errorf("recent item of %d bytes, url %d, agent %q...", last.size(), len(last.URL), last.Agent[:8])
	}
}
