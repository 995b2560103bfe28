package proxy

import (
	"net/http"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// NewMetrics returns the metrics of a Server, with the decision counters
// of every reason a Server decides with created at 0.
func NewMetrics() *metrics.Metrics { return metrics.New(knownReasons()) }

// knownReasons returns the Reasons whose decision counters are
// pre-created, each with whether its decisions allow the request.
func knownReasons() map[enforce.Reason]bool {
	return map[enforce.Reason]bool{
		enforce.ReasonAllowed: true, enforce.ReasonRobotsTxt: true,
		enforce.ReasonNoRobots: true, ReasonTunnel: true,
		enforce.ReasonDisallowed: false, enforce.ReasonUnreachable: false,
		ReasonPaused: false, ReasonQueueFull: false,
		ReasonRobotTag: false, ReasonPortForbidden: false,
		ReasonSiteClosed: false, enforce.ReasonInvalidURL: false,
		ReasonSelfRequest: false, ReasonMisdirected: false,
	}
}

// Metrics returns the Server's metrics (Deps.Metrics, or its own).
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// metricsBegin is the request hook that counts a request in flight; it
// is registered right after begin, so that observeMetrics, which every
// request's response side reaches, ends it.
func (s *Server) metricsBegin(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	s.metrics.RequestStarted()
	return r, nil
}

// observeMetrics is the response hook that counts the request's robots
// decision and upstream failure and ends its in-flight count. In flight
// thus means "between arrival and response headers": deciding, waiting
// for a crawl-delay slot or for the origin.
func (s *Server) observeMetrics(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	s.metrics.RequestDone()
	if st := stateOf(ctx); st.Decided {
		s.metrics.Decision(st.Decision)
	}
	if ctx.Error != nil {
		s.metrics.UpstreamError()
	}
	return resp
}

// countPauses returns the Pauses the Server should use so that
// robotsgate_paused_origins can count them: pauses itself when it can
// count (has Len, as enforce.MemoryPauses does), or a new in-memory one,
// counted, when pauses is nil (the default Politeness would create an
// uncountable one of its own).
func countPauses(m *metrics.Metrics, pauses enforce.Pauses) enforce.Pauses {
	if pauses == nil {
		mp := enforce.NewMemoryPauses()
		m.PausedOriginsFunc(mp.Len)
		return mp
	}
	if l, ok := pauses.(interface{ Len() int }); ok {
		m.PausedOriginsFunc(l.Len)
	}
	return pauses
}
