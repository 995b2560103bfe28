package proxy

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// Values of politeness.crawl_delay.
const (
	CrawlDelayHonor  = "honor"  // space requests by the robots.txt group's Crawl-delay
	CrawlDelayIgnore = "ignore" // disregard Crawl-delay (default_crawl_delay still applies)
)

// newPoliteness builds the politeness policy of cfg. pacer and pauses may
// be nil (in-memory, this process only). In report mode the policy
// decides without acting (enforce.PolitenessConfig.Report).
func newPoliteness(cfg Config, pacer enforce.Pacer, pauses enforce.Pauses, clock enforce.Clock, log zerolog.Logger) (*enforce.Politeness, error) {
	p := cfg.Politeness
	pol, err := enforce.NewPoliteness(enforce.PolitenessConfig{
		Clock:            clock,
		Pacer:            pacer,
		Pauses:           pauses,
		Log:              log,
		IgnoreCrawlDelay: p.CrawlDelay == CrawlDelayIgnore,
		DefaultDelay:     p.DefaultCrawlDelay,
		MaxDelay:         p.MaxCrawlDelay,
		MaxWait:          p.MaxQueueWait,
		BackoffStart:     p.BackoffStart,
		BackoffMax:       p.BackoffMax,
		MaxConcurrency:   p.MaxConcurrency,
		Report:           cfg.Mode == ModeReport,
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: politeness: %w", err)
	}
	return pol, nil
}

// pace is the politeness step. It runs after the robots.txt
// verdict, for requests about to be forwarded: a paused origin is
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
func (s *Server) pace(r *http.Request, ctx *goproxy.ProxyCtx, st *requestState) outcome {
	if !st.Decided || st.Answered || st.Decision.Origin == "" {
		return outcome{}
	}
	d := st.Decision
	s.metrics.QueueEntered() // [metrics] robotsgate_queued_requests
	// The wait also ends when Shutdown begins (lifetime.go): neither
	// net/http nor goproxy (MITM) cancels r's context then. Admit waits
	// only for a crawl-delay slot or a concurrency slot: without either,
	// skip that context (a few allocations per request on the hot path).
	wctx, cancel := r.Context(), context.CancelFunc(func() {})
	if s.polite.Delay(d.CrawlDelay) > 0 || s.cfg.Politeness.MaxConcurrency > 0 {
		wctx, cancel = s.untilShutdown(r.Context())
	}
	pm, ref, err := s.polite.Admit(wctx, d.Origin, d.CrawlDelay)
	down := err != nil && shuttingDown(wctx)
	cancel()
	s.metrics.QueueLeft()
	if down {
		return shutdownRefusal(d)
	}
	if err != nil {
		// The client went away while waiting: answer (nobody reads it)
		// rather than forward unpaced.
		s.log.Debug().Err(err).Str("url", d.URL).Msg("request cancelled while waiting for its crawl-delay slot")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: request cancelled while waiting for the origin's crawl-delay slot\n"}
	}
	if pm != nil {
		st.Permit = pm
		// Only a concurrency slot needs releasing (Release does nothing
		// else); without max_concurrency, skip the AfterFunc, which
		// would cost an allocation and a goroutine per request.
		if s.cfg.Politeness.MaxConcurrency > 0 {
			context.AfterFunc(r.Context(), pm.Release)
		}
		if pm.Waited > 0 {
			s.log.Debug().Str("origin", d.Origin).Dur("waited", pm.Waited).Dur("delay", pm.Delay).Msg("crawl-delay wait")
		}
	}
	if ref == nil {
		return outcome{}
	}

	rd := d
	rd.Allowed = false
	rd.Reason = ref.Reason
	rd.RetryAfter = ref.RetryAfter
	rd.Detail = ref.Detail
	rd.Rule, rd.Line = "", 0 // the allowing rule did not decide this; Group (whose Crawl-delay applied) stays
	retry := "; Retry-After " + enforce.FormatRetryAfter(ref.RetryAfter) + "s"
	if pm != nil { // report mode: the request goes on
		if d.Allowed { // keep a robots refusal as the request's verdict
			st.Decision = rd
		}
		o := note(audit.DecisionReported, rd)
		o.note = retry
		return o
	}
	status := http.StatusTooManyRequests
	if ref.Reason == ReasonPaused {
		status = http.StatusServiceUnavailable
	}
	o := refuse(status, rd)
	o.note = retry
	return o
}

// observeBackoff is the politeness response step: it tells the policy
// how the origin answered a request that pace admitted (503 and 429
// pause the origin, honouring Retry-After; a 2xx ends a pause). Answers
// robotsgate made itself, including 502/504 for failed forwarding, are
// not the origin's and are not observed.
func (s *Server) observeBackoff(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	if resp == nil || st.Permit == nil || st.Answered || ctx.Error != nil {
		return resp, outcome{}
	}
	until, paused := s.polite.Observe(context.WithoutCancel(ctx.Req.Context()), st.Permit.Origin,
		resp.StatusCode, resp.Header.Get("Retry-After"), st.Permit.Admitted)
	if paused {
		s.log.Info().Str("origin", st.Permit.Origin).Int("status", resp.StatusCode).
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
	d.Reason = ReasonShuttingDown
	d.Rule, d.Line = "", 0
	d.RetryAfter = time.Second
	d.Detail = "robotsgate is shutting down: the request was waiting for its crawl-delay slot and was not forwarded"
	o := refuse(http.StatusServiceUnavailable, d)
	o.close = true
	return o
}
