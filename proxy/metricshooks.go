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

// inflight is the step that counts a request in flight, and, on the
// response side, its decision and upstream failure; it ends the in-flight
// count there, which every request's response side reaches. In flight
// thus means "between arrival and response headers": deciding, waiting
// for a crawl-delay slot or for the origin.
type inflight struct{ m *metrics.Metrics }

func (f inflight) onRequest(*http.Request, *goproxy.ProxyCtx, *requestState) outcome {
	f.m.RequestStarted()
	return outcome{}
}

func (f inflight) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	f.m.RequestDone()
	if st.Decided {
		f.m.Decision(st.Decision)
	}
	if ctx.Error != nil {
		f.m.UpstreamError()
	}
	return resp, outcome{}
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
