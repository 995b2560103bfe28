package enforce

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// refusingTransport fails every round trip as robotsgate's dialer does
// for an address the egress policy forbids, counting them.
type refusingTransport struct{ n atomic.Int64 }

func (rt *refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.n.Add(1)
	return nil, fmt.Errorf("dial %s: 127.0.0.1 is private: %w", r.URL.Host, ErrDestinationPrivate)
}

// TestDestinationPrivateNeverAges: a robots.txt whose fetch the egress
// policy refused decides destination-private, all URLs disallowed, and
// keeps doing so past robots.unreachable_window, where another
// unreachable robots.txt would count as absent (all allowed).
func TestDestinationPrivateNeverAges(t *testing.T) {
	const window = 5 * time.Hour
	rt := &refusingTransport{}
	v := newEnv(t, serve(200, ""), Config{UnreachableWindow: window, RetryMin: time.Hour, RetryMax: time.Hour,
		Fetcher: &HTTPFetcher{Transport: rt, Timeout: 5 * time.Second}})
	for i := 0; i <= 7; i++ {
		t.Run(fmt.Sprintf("at +%dh", i), func(t *testing.T) {
			d := v.decide("/page", 0)
			if d.Allowed || d.Reason != ReasonDestinationPrivate || d.RobotsErrKind != FetchDestinationPrivate {
				t.Fatalf("%+v", d)
			}
		})
		v.clock.Advance(time.Hour)
	}
	if rt.n.Load() < 2 {
		t.Errorf("robots.txt fetched %d times: never retried", rt.n.Load())
	}
}
