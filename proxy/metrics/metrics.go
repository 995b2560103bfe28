// Package metrics holds robotsgate's Prometheus metrics, in a registry of
// their own, and the hooks that feed them from package enforce.
package metrics

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Metrics holds robotsgate's Prometheus metrics in a registry of its own
// (never the global default registry), so that several Servers in one
// process, as in tests, do not collide.
//
// The per-request methods (Decision, UpstreamError, RequestStarted, ...)
// use counters whose label values were resolved at construction: they do
// not allocate. A nil *Metrics is valid and records nothing.
type Metrics struct {
	reg *prometheus.Registry

	decisions *prometheus.CounterVec
	// byReason holds the pre-curried decision counters of the known
	// reasons, [0] for blocked and [1] for allowed; only the decision a
	// reason comes with is pre-created (so no impossible series is
	// exposed), the other is nil. It is never written after New,
	// so reads need no lock.
	byReason map[enforce.Reason]*[2]prometheus.Counter

	fetches       [5]prometheus.Counter // by statusClass index
	tdmFetches    [5]prometheus.Counter // tdmrep.json fetches, by statusClass index
	notModified   [3]prometheus.Counter // 304s to conditional fetches, by enforce.Doc (revalidate.go)
	fetchDuration prometheus.Histogram
	cacheHit      prometheus.Counter
	cacheMiss     prometheus.Counter

	upstreamErrors prometheus.Counter
	accessDenied   [2]prometheus.Counter // [0] 403 (client network), [1] 407 (credentials)
	pausedN        atomic.Int64
	queued         prometheus.Gauge
	inflight       prometheus.Gauge

	// usage holds robotsgate_usage_verdicts_total by purpose (an
	// [aipref.Purpose], or [contentUseLabel] for the content-use level),
	// source (by the index in [enforce.UsageSources]) and preference
	// ([aipref.Pref]). The label set is fixed and small: no origin, URL
	// or agent.
	usage      [aipref.NumPurposes + 1][][3]prometheus.Counter
	sourceSlot map[robots.UsageSource]int // index in enforce.UsageSources
	// tdm holds robotsgate_tdmrep_verdicts_total by source and
	// reservation (tdmrep.go).
	tdm [4][4]prometheus.Counter
	// license holds the RSL license metrics (license.go).
	license licenseMetrics
	// signed holds robotsgate_signatures_total by kind and result (signing.go).
	signed [2][3]prometheus.Counter
	// payment holds the pay-per-crawl metrics (payment.go).
	payment paymentMetrics

	reloads *prometheus.CounterVec // robotsgate_config_reloads_total by result

	cacheEntries atomic.Pointer[func() int]
	pausedFunc   atomic.Pointer[func() int]
}

// statusClasses are the values of the status_class label of
// robotsgate_robots_fetches_total; index 0 is a fetch without a response.
var statusClasses = [5]string{"error", "2xx", "3xx", "4xx", "5xx"}

// New returns Metrics registered in a new private registry, with the Go
// runtime and process collectors. known lists the Reasons whose decision
// counters are created now (so that they are exposed at 0 and counting
// them does not allocate), each with whether its decisions allow the
// request; other reasons are counted as they come.
func New(known map[enforce.Reason]bool) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(m.requestCollectors()...)
	m.reg.MustRegister(m.robotsCollectors()...)
	m.reg.MustRegister(m.licenseCollectors()...)
	m.reg.MustRegister(m.paymentCollectors()...)
	m.reloads = newReloads()
	m.reg.MustRegister(m.newUsageCounters(), m.reloads, m.newTDMCounters(), m.newSigningCounters(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.byReason = make(map[enforce.Reason]*[2]prometheus.Counter, len(known))
	for r, allowed := range known {
		cs := &[2]prometheus.Counter{}
		if allowed {
			cs[1] = m.decisions.WithLabelValues("allowed", string(r))
		} else {
			cs[0] = m.decisions.WithLabelValues("blocked", string(r))
		}
		m.byReason[r] = cs
	}
	return m
}

// requestCollectors creates the metrics of proxied requests: decisions,
// access refusals, upstream errors, paused origins, queued and in-flight
// requests.
func (m *Metrics) requestCollectors() []prometheus.Collector {
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_decisions_total",
		Help: "Requests decided, by decision (allowed|blocked) and reason.",
	}, []string{"decision", "reason"})
	denied := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_access_denied_total",
		Help: "Proxy requests refused by access control, by status (403: client address not allowed, 407: missing or wrong credentials).",
	}, []string{"status"})
	m.accessDenied = [2]prometheus.Counter{denied.WithLabelValues("403"), denied.WithLabelValues("407")}
	m.upstreamErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "robotsgate_upstream_errors_total",
		Help: "Forwarded requests that got no response from the origin.",
	})
	paused := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "robotsgate_paused_origins",
		Help: "Origins currently paused after a 503/429 (Retry-After).",
	}, func() float64 {
		if f := m.pausedFunc.Load(); f != nil {
			return float64((*f)())
		}
		return float64(m.pausedN.Load())
	})
	m.queued = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "robotsgate_queued_requests",
		Help: "Requests waiting for their crawl-delay slot.",
	})
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "robotsgate_inflight_requests",
		Help: "Proxy requests being served.",
	})
	return []prometheus.Collector{m.decisions, m.upstreamErrors, paused, m.queued, m.inflight, denied}
}

// byStatusClass returns a counter of fetches by final HTTP status class
// (label status_class, [statusClasses]) and sets each of counters to the
// counter of the class of its index.
func byStatusClass(name, what string, counters *[5]prometheus.Counter) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: name,
		Help: what + ", by final HTTP status class (error: no response).",
	}, []string{"status_class"})
	for i, c := range statusClasses {
		counters[i] = v.WithLabelValues(c)
	}
	return v
}

// robotsCollectors creates the metrics of robots.txt fetches and of its
// cache.
func (m *Metrics) robotsCollectors() []prometheus.Collector {
	fetches := byStatusClass("robotsgate_robots_fetches_total", "robots.txt fetches", &m.fetches)
	tdmFetches := byStatusClass("robotsgate_tdmrep_fetches_total", "/.well-known/tdmrep.json fetches", &m.tdmFetches)
	m.fetchDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "robotsgate_robots_fetch_duration_seconds",
		Help:    "Duration of robots.txt fetches, redirects included.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_robots_cache_lookups_total",
		Help: "robots.txt cache lookups, by result (hit|miss).",
	}, []string{"result"})
	m.cacheHit = lookups.WithLabelValues("hit")
	m.cacheMiss = lookups.WithLabelValues("miss")
	entries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "robotsgate_robots_cache_entries",
		Help: "robots.txt entries in the local cache (with Redis: this process's copies).",
	}, func() float64 {
		if f := m.cacheEntries.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	return []prometheus.Collector{fetches, tdmFetches, m.fetchDuration, lookups, entries, m.notModifiedCollector()}
}

// Registry returns the private registry, for tests and for callers that
// add collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// newReloads returns robotsgate_config_reloads_total, both results at 0.
func newReloads() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_config_reloads_total",
		Help: "Configuration reloads (SIGHUP, POST /v1/reload), by result (ok: in force; invalid: refused, the running configuration kept).",
	}, []string{"result"})
	c.WithLabelValues("ok")
	c.WithLabelValues("invalid")
	return c
}

// ConfigReload counts one reload of the configuration with result (ok or
// invalid).
func (m *Metrics) ConfigReload(result string) {
	if m != nil {
		m.reloads.WithLabelValues(result).Inc()
	}
}

// Decision counts one decision on a proxied request. Admin API queries
// are not counted (the admin API decides quietly,
// [enforce.DecideOptions].Quiet, which reports no cache lookup either),
// nor are requests whose client left before a decision
// ([enforce.ReasonClientGone]).
func (m *Metrics) Decision(d enforce.Decision) {
	if m == nil || d.Reason == enforce.ReasonClientGone {
		return
	}
	m.usageVerdicts(&d)
	m.tdmVerdict(&d)
	m.licenseVerdict(&d)
	i := 0
	if d.Allowed {
		i = 1
	}
	if cs, ok := m.byReason[d.Reason]; ok && cs[i] != nil {
		cs[i].Inc()
		return
	}
	result := "blocked"
	if d.Allowed {
		result = "allowed"
	}
	m.decisions.WithLabelValues(result, string(d.Reason)).Inc()
}

// AccessDenied counts one proxy request refused by access control with
// status: [http.StatusForbidden] or [http.StatusProxyAuthRequired].
func (m *Metrics) AccessDenied(status int) {
	if m == nil {
		return
	}
	if status == http.StatusProxyAuthRequired {
		m.accessDenied[1].Inc()
		return
	}
	m.accessDenied[0].Inc()
}

// RobotsFetched records one robots.txt fetch of origin that took took.
// Its signature fits enforce's fetch hook.
func (m *Metrics) RobotsFetched(origin string, r enforce.FetchResult, took time.Duration) {
	if m == nil {
		return
	}
	m.fetches[statusClass(r.HTTPStatus)].Inc()
	m.fetchDuration.Observe(took.Seconds())
	m.revalidated(enforce.DocRobots, r)
}

// TDMRepFetched records one tdmrep.json fetch. Its signature fits
// enforce's fetch hook.
func (m *Metrics) TDMRepFetched(_ string, r enforce.FetchResult, _ time.Duration) {
	if m == nil {
		return
	}
	m.tdmFetches[statusClass(r.HTTPStatus)].Inc()
	m.revalidated(enforce.DocTDMRep, r)
}

// statusClass returns the index in [statusClasses] of an HTTP status.
func statusClass(code int) int {
	switch {
	case code >= 200 && code < 300:
		return 1
	case code >= 300 && code < 400:
		return 2
	case code >= 400 && code < 500:
		return 3
	case code >= 500 && code < 600:
		return 4
	}
	return 0
}

// CacheLookup records one robots.txt cache lookup for origin. Its
// signature fits enforce's cache hook.
func (m *Metrics) CacheLookup(origin string, hit bool) {
	if m == nil {
		return
	}
	if hit {
		m.cacheHit.Inc()
	} else {
		m.cacheMiss.Inc()
	}
}

// CacheEntriesFunc makes robotsgate_robots_cache_entries report f()
// at each scrape. f must be safe for concurrent use.
func (m *Metrics) CacheEntriesFunc(f func() int) {
	if m == nil {
		return
	}
	m.cacheEntries.Store(&f)
}

// UpstreamError counts a forwarded request that got no response.
func (m *Metrics) UpstreamError() {
	if m == nil {
		return
	}
	m.upstreamErrors.Inc()
}

// RequestStarted counts a proxy request in flight; pair it with
// RequestDone.
func (m *Metrics) RequestStarted() {
	if m == nil {
		return
	}
	m.inflight.Inc()
}

// RequestDone ends a RequestStarted.
func (m *Metrics) RequestDone() {
	if m == nil {
		return
	}
	m.inflight.Dec()
}

// QueueEntered counts a request waiting for its crawl-delay slot; pair it
// with QueueLeft.
func (m *Metrics) QueueEntered() {
	if m == nil {
		return
	}
	m.queued.Inc()
}

// QueueLeft ends a QueueEntered.
func (m *Metrics) QueueLeft() {
	if m == nil {
		return
	}
	m.queued.Dec()
}

// PausedOriginsFunc makes robotsgate_paused_origins report f() at each
// scrape (e.g. [politeness.MemoryPauses.Len]). f must be safe for concurrent
// use. Without it the gauge reports what SetPausedOrigins set.
func (m *Metrics) PausedOriginsFunc(f func() int) {
	if m == nil {
		return
	}
	m.pausedFunc.Store(&f)
}

// SetPausedOrigins sets the number of currently paused origins, for
// callers that count pauses themselves instead of PausedOriginsFunc.
func (m *Metrics) SetPausedOrigins(n int) {
	if m == nil {
		return
	}
	m.pausedN.Store(int64(n))
}

// EnforceHooks returns the [enforce.Hooks] that feed m: pass them in
// [enforce.Config.Hooks] of the Enforcer the Server uses.
func (m *Metrics) EnforceHooks() enforce.Hooks {
	if m == nil {
		return enforce.Hooks{}
	}
	return enforce.Hooks{Fetched: m.RobotsFetched, TDMFetched: m.TDMRepFetched, LicenseFetched: m.LicenseFetched, CacheLookup: m.CacheLookup}
}

// contentUseLabel is the purpose label of the content-use verdicts:
// allowed when the site's level permits the declared content use,
// disallowed when it is below, unknown when the site states none.
const contentUseLabel = "content-use"

// usageVerdicts counts the usage preference of each declared purpose of
// d, and the verdict of its declared content use, for URLs Allow/Disallow
// permits (a disallowed URL has none).
func (m *Metrics) usageVerdicts(d *enforce.Decision) {
	if !d.Allowed && d.Reason != enforce.ReasonUsageDisallowed {
		return
	}
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if uv := d.Usage.For(p); d.Purposes.Has(p) {
			m.countUsage(int(p), uv.Source, uv.Pref)
		}
	}
	if d.ContentUse != aipref.UseUnknown {
		pref := aipref.Unknown
		switch {
		case d.ContentUseBlocked:
			pref = aipref.Disallowed
		case d.SiteUse.Level != aipref.UseUnknown:
			pref = aipref.Allowed
		}
		m.countUsage(aipref.NumPurposes, d.SiteUse.Source, pref)
	}
}

// countUsage counts one verdict; a source or preference out of the
// label set is not counted.
func (m *Metrics) countUsage(purpose int, src robots.UsageSource, pref aipref.Pref) {
	if i, ok := m.sourceSlot[src]; ok && int(pref) < 3 {
		m.usage[purpose][i][pref].Inc()
	}
}

// newUsageCounters creates robotsgate_usage_verdicts_total with every
// series (purpose, source, pref) at 0.
func (m *Metrics) newUsageCounters() *prometheus.CounterVec {
	usage := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_usage_verdicts_total",
		Help: "Usage preferences of decided requests for their declared purposes (and content-use verdicts of a declared content use), by purpose, source of the preference (none when unknown) and preference (allowed|disallowed|unknown).",
	}, []string{"purpose", "source", "pref"})
	srcs := enforce.UsageSources()
	m.sourceSlot = make(map[robots.UsageSource]int, len(srcs))
	for i, s := range srcs {
		m.sourceSlot[s] = i
	}
	for p := range m.usage {
		name := contentUseLabel
		if p < aipref.NumPurposes {
			name = aipref.Purpose(p).String()
		}
		m.usage[p] = make([][3]prometheus.Counter, len(srcs))
		for i, s := range srcs {
			src := enforce.SourceName(s)
			if src == "" {
				src = "none"
			}
			for v := range m.usage[p][i] {
				m.usage[p][i][v] = usage.WithLabelValues(name, src, aipref.Pref(v).String())
			}
		}
	}
	return usage
}
