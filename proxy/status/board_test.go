package status

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit"
)

// fakeNow is a settable clock.
type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time { return f.t }

func refusal(origin, reason string) audit.Event {
	return audit.Event{Decision: audit.DecisionBlocked, Reason: reason, Origin: origin, URL: origin + "/x"}
}

// TestPublishNeverWaitsForAStream: a stream that reads nothing loses the
// records beyond its buffer and is told how many; Publish returns for
// every record and counts all of them.
func TestPublishNeverWaitsForAStream(t *testing.T) {
	clk := &fakeNow{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b := New(clk.now)
	stuck, ok := b.Subscribe()
	if !ok {
		t.Fatal("Subscribe refused")
	}
	const n = subscriberBuffer * 4
	for range n {
		b.Publish(refusal("http://a.example", "disallowed"))
	}
	if got := len(stuck.Items()); got != subscriberBuffer {
		t.Errorf("the stuck stream holds %d records, want its buffer %d", got, subscriberBuffer)
	}
	if got := stuck.Dropped(); got != n-subscriberBuffer {
		t.Errorf("Dropped = %d, want %d", got, n-subscriberBuffer)
	}
	if s := b.Snapshot(10); s.Refusals != n || s.Records != n {
		t.Errorf("counted %d records, %d refusals; want %d", s.Records, s.Refusals, n)
	}
}

// TestSnapshotCounts: refusals per minute by reason over a window of
// [Minutes] minutes, allowed records and reloads not counted as
// refusals, the top origins in order.
func TestSnapshotCounts(t *testing.T) {
	clk := &fakeNow{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b := New(clk.now)
	b.Publish(refusal("http://a.example", "disallowed"))
	b.Publish(refusal("http://a.example", "disallowed"))
	b.Publish(refusal("http://b.example", "robots-unreachable"))
	b.Publish(audit.Event{Decision: audit.DecisionAllowed, Reason: "allowed", Origin: "http://c.example"})
	b.Publish(audit.Event{Kind: audit.KindConfigReload, Reason: "ok", Detail: "changed: mode"})
	clk.t = clk.t.Add(2 * time.Minute)
	b.Publish(refusal("http://b.example", "disallowed"))
	b.Publish(refusal("http://b.example", "disallowed"))

	s := b.Snapshot(10)
	if len(s.PerMinute) != Minutes {
		t.Fatalf("%d minutes, want %d", len(s.PerMinute), Minutes)
	}
	last, first := s.PerMinute[Minutes-1], s.PerMinute[Minutes-3]
	if last.ByReason["disallowed"] != 2 || len(last.ByReason) != 1 {
		t.Errorf("this minute: %v", last.ByReason)
	}
	if first.ByReason["disallowed"] != 2 || first.ByReason["robots-unreachable"] != 1 || len(first.ByReason) != 2 {
		t.Errorf("two minutes ago: %v", first.ByReason)
	}
	want := []OriginCount{{"http://b.example", 3}, {"http://a.example", 2}}
	if fmt.Sprint(s.Top) != fmt.Sprint(want) {
		t.Errorf("top = %v, want %v", s.Top, want)
	}
	if s.Records != 7 || s.Refusals != 5 || len(s.Recent) != 7 || s.Recent[4].Kind != audit.KindConfigReload {
		t.Errorf("records %d refusals %d recent %+v", s.Records, s.Refusals, s.Recent)
	}
	// An hour later the old minutes are gone.
	clk.t = clk.t.Add(time.Hour)
	for _, m := range b.Snapshot(10).PerMinute {
		if len(m.ByReason) != 0 {
			t.Errorf("minute %v still counts %v an hour later", m.Minute, m.ByReason)
		}
	}
}

// TestBoundedOrigins: ever new origins never grow the table beyond its
// bound, and an origin refused often still reaches the top.
func TestBoundedOrigins(t *testing.T) {
	b := New(nil)
	for i := range maxOrigins * 3 {
		b.Publish(refusal(fmt.Sprintf("http://o%d.example", i), "disallowed"))
		if i%10 == 0 {
			b.Publish(refusal("http://often.example", "disallowed"))
		}
	}
	if len(b.origins) > maxOrigins {
		t.Fatalf("%d origins kept, bound %d", len(b.origins), maxOrigins)
	}
	if top := b.Snapshot(1).Top; len(top) != 1 || top[0].Origin != "http://often.example" {
		t.Errorf("top = %v, want http://often.example first", top)
	}
}

// TestSubscribersBounded: no more than [maxSubscribers] streams, none
// after Close.
func TestSubscribersBounded(t *testing.T) {
	b := New(nil)
	for range maxSubscribers {
		if _, ok := b.Subscribe(); !ok {
			t.Fatal("Subscribe refused below the bound")
		}
	}
	if _, ok := b.Subscribe(); ok {
		t.Error("Subscribe beyond the bound accepted")
	}
	b2 := New(nil)
	b2.Close()
	if _, ok := b2.Subscribe(); ok {
		t.Error("Subscribe after Close accepted")
	}
}

// TestPageTextOnly: the page's script puts data in the page as text only,
// and the page loads nothing from elsewhere.
func TestPageTextOnly(t *testing.T) {
	js, err := os.ReadFile("page/app.js")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function`).Find(js); m != nil {
		t.Errorf("app.js uses %s: data from clients and origins must go in as text", m)
	}
	for _, f := range []string{"page/index.html", "page/app.js", "page/app.css"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(src|href)\s*=\s*["']?(https?:)?//|@import|url\(`).Find(b); m != nil {
			t.Errorf("%s loads from elsewhere: %s", f, m)
		}
	}
}

// BenchmarkPublish is the cost the audit path pays per record: with no
// page open, and with 16 open streams that read nothing (their buffers
// full, every record dropped for them).
func BenchmarkPublish(b *testing.B) {
	for _, streams := range []int{0, maxSubscribers} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			bd := New(nil)
			for range streams {
				bd.Subscribe()
			}
			e := refusal("http://a.example", "disallowed")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bd.Publish(e)
				}
			})
		})
	}
}
