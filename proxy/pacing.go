package proxy

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// Pacing: the politeness step (crawl-delay slots, concurrency limits,
// pauses after 503/429) around package politeness, and its refusals
// (429 crawl-delay-wait, 503 origin-paused, 503 shutting-down).

// pacingStep is the politeness step. It runs after the robots.txt
// decision, for requests about to be forwarded: a paused origin is
// answered with 503 and Retry-After, and a request whose crawl-delay wait
// would be too long with 429 and Retry-After; both are audited (reasons
// origin-paused and crawl-delay-wait) and never reach the origin. Other
// requests wait here for their slot, then go.
//
// In report mode nothing waits and nothing is refused: the would-be
// refusal is audited as "reported" and marked on the response
// (X-Robotsgate-Decision: report-only; ...).
//
// A request still waiting when Shutdown begins is answered 503 and
// audited (reason shutting-down) before the audit log closes.
//
// The permit is released when the request is over (its context ends,
// after the response body was copied), which frees a concurrency slot.
//
// State: reads the verdict (Decision, Decided); writes Permit and the
// verdict (Decision, Answered through settle) ([requestState]).
type pacingStep struct {
	polite         *politeness.Politeness
	metrics        *metrics.Metrics
	life           *conns.Lifetime
	maxConcurrency int // politeness.max_concurrency
	log            zerolog.Logger
}

func (pc pacingStep) onRequest(r *http.Request, st *requestState) outcome {
	if !st.Decided || st.Answered || st.Decision.Origin == "" {
		return outcome{}
	}
	d := st.Decision
	pc.metrics.QueueEntered() // robotsgate_queued_requests
	// The wait also ends when Shutdown begins ([conns.Lifetime.UntilShutdown]): neither
	// net/http nor goproxy (MITM) cancels r's context then. Admit waits
	// only for a crawl-delay slot or a concurrency slot: without either,
	// skip that context (a few allocations per request on the hot path).
	wctx, cancel := r.Context(), context.CancelFunc(func() {})
	if pc.polite.Delay(d.CrawlDelay) > 0 || pc.maxConcurrency > 0 {
		wctx, cancel = pc.life.UntilShutdown(r.Context())
	}
	pm, ref, err := pc.polite.Admit(wctx, d.Origin, d.CrawlDelay)
	down := err != nil && conns.ShuttingDown(wctx)
	cancel()
	pc.metrics.QueueLeft()
	if down {
		return shutdownRefusal(d)
	}
	if err != nil {
		// The client went away while waiting: answer (nobody reads it)
		// rather than forward unpaced.
		pc.log.Debug().Err(err).Str("url", d.URL).Msg("request cancelled while waiting for its crawl-delay slot")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: request cancelled while waiting for the origin's crawl-delay slot\n"}
	}
	if pm != nil {
		st.Permit = pm
		// Only a concurrency slot needs releasing (Release does nothing
		// else); without max_concurrency, skip the AfterFunc, which
		// would cost an allocation and a goroutine per request.
		if pc.maxConcurrency > 0 {
			context.AfterFunc(r.Context(), pm.Release)
		}
		if pm.Waited > 0 {
			pc.log.Debug().Str("origin", d.Origin).Int64("waited_ms", pm.Waited.Milliseconds()).Int64("delay_ms", pm.Delay.Milliseconds()).Msg("crawl-delay wait")
		}
	}
	if ref == nil {
		return outcome{}
	}
	return politenessRefusal(st, pm != nil, ref)
}

// politenessRefusal is the outcome of the politeness refusal ref of the
// request decided st.Decision: a refusal, or in report mode (admitted:
// the request goes on) an audited would-be refusal, which replaces an
// allowing decision as the request's.
func politenessRefusal(st *requestState, admitted bool, ref *politeness.Refusal) outcome {
	d := st.Decision
	rd := d
	rd.Allowed = false
	rd.Reason = ref.Reason
	rd.RetryAfter = ref.RetryAfter
	rd.Detail = ref.Detail
	rd.Rule, rd.Line = "", 0 // the allowing rule did not decide this; Group (whose Crawl-delay applied) stays
	retry := "; Retry-After " + politeness.FormatRetryAfter(ref.RetryAfter) + "s"
	if admitted { // report mode: the request goes on
		if d.Allowed { // keep a robots refusal as the request's decision
			st.Decision = rd
		}
		o := note(audit.DecisionReported, rd)
		o.auditDetail = retry
		return o
	}
	o := refuse(rd)
	o.auditDetail = retry
	return o
}

// onResponse is the politeness response step: it tells the policy
// how the origin answered a request that [pacingStep.onRequest] admitted (503 and 429
// pause the origin, honouring Retry-After; a 2xx ends a pause). Answers
// robotsgate made itself, including 502/504 for failed forwarding, are
// not the origin's and are not observed.
func (pc pacingStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if st.Permit == nil {
		return resp, outcome{}
	}
	until, paused := pc.polite.Observe(context.WithoutCancel(st.Req.Context()), st.Permit.Origin,
		resp.StatusCode, resp.Header.Get("Retry-After"), st.Permit.Admitted)
	if paused {
		pc.log.Info().Str("origin", st.Permit.Origin).Int("status", resp.StatusCode).
			Str("retry_after", resp.Header.Get("Retry-After")).Time("until", until).
			Msg("origin paused")
	}
	return resp, outcome{}
}

// shutdownRefusal is the 503 of a request that was waiting for its
// crawl-delay slot, decided d, when Shutdown began; the origin saw
// nothing.
func shutdownRefusal(d enforce.Decision) outcome {
	d.Allowed = false
	d.Reason = answer.ReasonShuttingDown
	d.Rule, d.Line = "", 0
	d.RetryAfter = time.Second
	d.Detail = "robotsgate is shutting down: the request was waiting for its crawl-delay slot and was not forwarded"
	o := refuse(d)
	o.close = true
	return o
}

// countPauses returns the Pauses the Server should use so that
// robotsgate_paused_origins can count them: pauses itself when it can
// count (has Len, as [politeness.MemoryPauses] does), or a new in-memory one,
// counted, when pauses is nil (the default Politeness would create an
// uncountable one of its own).
func countPauses(m *metrics.Metrics, pauses politeness.Pauses) politeness.Pauses {
	if pauses == nil {
		mp := politeness.NewMemoryPauses()
		m.PausedOriginsFunc(mp.Len)
		return mp
	}
	if l, ok := pauses.(interface{ Len() int }); ok {
		m.PausedOriginsFunc(l.Len)
	}
	return pauses
}
