package enforce

import (
	"context"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
)

// kindFetcher fails every fetch with kind, counting them.
type kindFetcher struct {
	kind  FetchErrorKind
	calls atomic.Int64
}

func (f *kindFetcher) Fetch(context.Context, string) FetchResult {
	f.calls.Add(1)
	return FetchResult{Status: StatusUnreachable, Err: string(f.kind) + ": test failure", ErrKind: f.kind}
}

// An origin that was never reached is refused as origin-unreachable and
// its robots.txt retried after 10 s, doubling up to RetryMin; a
// robots.txt that answered (an HTTP status) keeps the RetryMin..RetryMax
// backoff and the robots-unreachable reason. Both say when they retry.
func TestRetryDependsOnKind(t *testing.T) {
	cases := []struct {
		kind   FetchErrorKind
		reason Reason
		waits  []time.Duration
	}{
		{FetchDNS, ReasonOriginUnreachable, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}},
		{FetchRefused, ReasonOriginUnreachable, []time.Duration{10 * time.Second, 20 * time.Second}},
		{FetchTimeout, ReasonOriginUnreachable, []time.Duration{10 * time.Second}},
		{FetchTLSUntrusted, ReasonOriginUnreachable, []time.Duration{10 * time.Second}},
		{FetchStatus, ReasonRobotsUnreachable, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			f := &kindFetcher{kind: c.kind}
			clock := enforcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := newTestEnforcer(t, Config{Fetcher: f, RetryMin: time.Minute, RetryMax: time.Hour}, clock)
			u, _ := url.Parse("http://origin.test/page")
			for i, wait := range c.waits {
				d := e.Decide(context.Background(), u, "", DecideOptions{})
				if d.Allowed || d.Reason != c.reason || d.RobotsErrKind != c.kind {
					t.Fatalf("failure %d: %v/%s kind %q", i+1, d.Allowed, d.Reason, d.RobotsErrKind)
				}
				if d.RetryAfter != wait || !strings.Contains(d.Detail, "tried again in "+wait.String()) {
					t.Fatalf("failure %d: RetryAfter %v, detail %q; want %v", i+1, d.RetryAfter, d.Detail, wait)
				}
				clock.Advance(wait - time.Second)
				if d := e.Decide(context.Background(), u, "", DecideOptions{}); d.RetryAfter != time.Second || f.calls.Load() != int64(i+1) {
					t.Fatalf("before the retry: RetryAfter %v, %d fetches", d.RetryAfter, f.calls.Load())
				}
				clock.Advance(time.Second)
			}
		})
	}
}
