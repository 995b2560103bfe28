package metrics

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// testReasons are the pre-created decision counters of the tests.
var testReasons = map[enforce.Reason]bool{enforce.ReasonAllowed: true, enforce.ReasonDisallowed: false}

func TestMetricsPrivateRegistries(t *testing.T) {
	a, b := New(testReasons), New(testReasons) // must not panic on duplicate registration
	a.Decision(enforce.Decision{Allowed: false, Reason: enforce.ReasonDisallowed})
	a.Decision(enforce.Decision{Allowed: true, Reason: "some-new-reason"}) // unknown reasons still count
	a.RobotsFetched("http://x", enforce.FetchResult{HTTPStatus: 503}, 20*time.Millisecond)
	a.RobotsFetched("http://x", enforce.FetchResult{HTTPStatus: 0}, time.Second)
	a.TDMRepFetched("http://x", enforce.FetchResult{HTTPStatus: 404}, time.Second)
	a.EnforceHooks().LicenseFetched("http://x/l.xml#rsl-license", enforce.FetchResult{HTTPStatus: 200}, time.Second)
	a.SetPausedOrigins(3)
	a.QueueEntered()
	a.RequestStarted()

	exp := func(m *Metrics) string { return testsupport.Exposition(m.Handler()) }
	ea, eb := exp(a), exp(b)
	for s, w := range map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="disallowed"}`:      1,
		`robotsgate_decisions_total{decision="allowed",reason="some-new-reason"}`: 1,
		`robotsgate_robots_fetches_total{status_class="5xx"}`:                     1,
		`robotsgate_robots_fetches_total{status_class="error"}`:                   1,
		`robotsgate_robots_fetch_duration_seconds_count`:                          2,
		`robotsgate_tdmrep_fetches_total{status_class="4xx"}`:                     1,
		`robotsgate_license_fetches_total{status_class="2xx"}`:                    1,
		`robotsgate_robots_fetches_total{status_class="4xx"}`:                     0,
		`robotsgate_robots_fetch_duration_seconds_sum`:                            1.02,
		`robotsgate_paused_origins`:                                               3,
		`robotsgate_queued_requests`:                                              1,
		`robotsgate_inflight_requests`:                                            1,
	} {
		if v := testsupport.MetricValue(t, ea, s); v != w {
			t.Errorf("a: %s = %v, want %v", s, v, w)
		}
		if v := testsupport.MetricValue(t, eb, s); v > 0 {
			t.Errorf("b: %s = %v, want 0: registries are shared", s, v)
		}
	}
	a.PausedOriginsFunc(func() int { return 7 })
	if v := testsupport.MetricValue(t, exp(a), "robotsgate_paused_origins"); v != 7 {
		t.Errorf("paused with func = %v, want 7", v)
	}

	var nilM *Metrics // a nil *Metrics records nothing and does not panic
	nilM.Decision(enforce.Decision{})
	nilM.UpstreamError()
	nilM.CacheLookup("x", true)
}

func TestMetricsDecisionDoesNotAllocate(t *testing.T) {
	m := New(testReasons)
	d := enforce.Decision{Allowed: false, Reason: enforce.ReasonDisallowed}
	r := enforce.FetchResult{HTTPStatus: 200}
	if n := testing.AllocsPerRun(1000, func() {
		m.Decision(d)
		m.CacheLookup("http://x", true)
		m.RobotsFetched("http://x", r, time.Millisecond)
		m.RequestStarted()
		m.RequestDone()
	}); n != 0 {
		t.Errorf("per-request metrics allocate %v times", n)
	}
}

// BenchmarkMetricsPerRequest measures what one proxied request costs in
// metrics (decision, lookup, in-flight).
func BenchmarkMetricsPerRequest(b *testing.B) {
	m := New(testReasons)
	d := enforce.Decision{Allowed: true, Reason: enforce.ReasonAllowed}
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.RequestStarted()
			m.CacheLookup("http://x", true)
			m.Decision(d)
			m.RequestDone()
			n.Add(1)
		}
	})
}
