package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// destination is the step that refuses, whatever the mode:
//   - with 421 Misdirected Request, a request inside an MITM session whose
//     host:port is not the one its CONNECT named (goproxy builds the URL
//     from the inner Host header, which would bypass https.allowed_ports
//     and apply robots.txt and pacing to another origin than the
//     certificate's);
//   - with 403, a request whose destination is robotsgate itself (its
//     proxy or admin listener): the admin API must not be reachable
//     through the proxy.
//
// Both are audited as blocked.
type destination struct{ self *selfaddr.Set }

func (dst destination) onRequest(r *http.Request, ctx *goproxy.ProxyCtx, st *requestState) outcome {
	host, port, portOK := selfaddr.DestHostPort(r.URL.Host, r.URL.Scheme)
	if parent, ok := st.Parent.(*requestState); ok && parent.ConnectTarget != "" {
		target := selfaddr.JoinHostPort(host, port)
		hdr := target
		if r.Host != "" {
			hh, hp, hok := selfaddr.DestHostPort(r.Host, r.URL.Scheme)
			hdr, portOK = selfaddr.JoinHostPort(hh, hp), portOK && hok
		}
		if !portOK || target != parent.ConnectTarget || hdr != parent.ConnectTarget {
			d := enforce.Decision{Reason: ReasonMisdirected, URL: enforce.RedactedURL(r.URL), Agent: parent.Agent,
				Detail: "the request names " + strconv.Quote(hdr) + " inside a CONNECT to " + strconv.Quote(parent.ConnectTarget) +
					": send requests for another host through their own CONNECT"}
			return refuse(d)
		}
	}
	if !portOK {
		return outcome{} // not dialable: the dialer refuses it (selfDialer), enforce calls it an invalid URL
	}
	pin, self := dst.self.Check(r.Context(), host, port)
	if self {
		d := enforce.Decision{Reason: ReasonSelfRequest, URL: enforce.RedactedURL(r.URL),
			Detail: "the destination " + selfaddr.JoinHostPort(host, port) + " is robotsgate itself; its admin API is not reachable through the proxy"}
		if o, err := enforce.Origin(r.URL); err == nil {
			d.Origin = o
		}
		return refuse(d)
	}
	if pin != nil { // dial exactly the addresses just checked
		ctx.Req = r.WithContext(selfaddr.WithPin(r.Context(), pin))
	}
	return outcome{}
}

// maxRefusedOverride bounds how much of a refused override header the
// audit record quotes.
const maxRefusedOverride = 256

// agents picks the robots agent of each request (agentFor).
type agents struct {
	configured    string     // config.Config.Agent: the agent of every request, "" for the User-Agent's
	header        string     // the canonical per-request override header, "" when disabled
	allowOverride bool       // config.Config.AllowAgentOverride
	purposes      aipref.Set // config.Config.Purposes
	contentUse    aipref.Use // config.Config.ContentUse
	purposeHeader string     // the canonical purposes header (usage.purpose_header), "" when disabled
}

// newAgents returns the agent policy of the configured agent, override
// header (Config.AgentHeader: "" or "-" disables it) and
// allow_agent_override.
func newAgents(agent, header string, allowOverride bool) *agents {
	a := &agents{configured: agent, allowOverride: allowOverride}
	if header != "" && header != "-" {
		a.header = http.CanonicalHeaderKey(header)
	}
	return a
}

// override returns the value of r's agent override header (every line of
// it, trimmed) and whether r carries a non-empty one. It is always false
// when the header is disabled.
func (a *agents) override(r *http.Request) (string, bool) {
	if a.header == "" {
		return "", false
	}
	v := strings.TrimSpace(strings.Join(r.Header.Values(a.header), ", "))
	return v, v != ""
}

// overrideAllowed reports whether a client may choose its agent with the
// override header: always when no agent is configured (the agent then
// comes from the User-Agent, which the client chooses just as freely), and
// against a configured agent only with Config.AllowAgentOverride.
func (a *agents) overrideAllowed(configured string) bool {
	return configured == "" || a.allowOverride
}

// agentFor returns the robots agent (product token) for r, by precedence:
// r's own override header; for a request inside an MITM session, the
// override header of the session's CONNECT (st.Parent); the configured
// agent; the crawler token of r's User-Agent (robots.CrawlerToken). An
// override is honoured only when overrideAllowed; a refused one that names
// another agent than the configured one is kept in st.OverrideRefused for
// the audit (requests inside an MITM session inherit the CONNECT's). An
// honoured override decides even when it names no valid token: "" means
// only the "*" group applies. It records r's override in st, so that
// requests inside a CONNECT's session inherit it.
func (a *agents) agentFor(r *http.Request, st *requestState) string {
	parent, _ := st.Parent.(*requestState)
	identify(r, st)
	configured := a.configured
	if st.Identity.Agent != "" { // the user's agent is authoritative like the configured one
		configured = st.Identity.Agent
	}
	if v, ok := a.override(r); ok {
		tok := robots.CrawlerToken(v)
		switch {
		case a.overrideAllowed(configured):
			st.Overridden, st.AgentOverride = true, tok
		case !strings.EqualFold(tok, configured):
			st.OverrideRefused = truncateUTF8(v, maxRefusedOverride)
		}
	}
	if st.OverrideRefused == "" && parent != nil {
		st.OverrideRefused = parent.OverrideRefused
	}
	switch {
	case st.Overridden:
		return st.AgentOverride
	case parent != nil && parent.Overridden:
		return parent.AgentOverride
	case configured != "":
		return configured
	}
	return robots.CrawlerToken(r.Header.Get("User-Agent"))
}

// robotsStep is the robots.txt step: it picks the agent, strips the
// override header (honoured or not) and asks the Enforcer. In enforce
// mode a refusal is answered with a 403 so that the request never leaves
// (with a 502 when the refusal is really an origin whose certificate
// failed verification: untrustedRobots). Refusals, report-mode would-be
// refusals, refused agent overrides and, with audit: all, every decision
// are audited. A client's own GET or HEAD of /robots.txt (spelled so) is
// always allowed.
type robotsStep struct {
	enf         *enforce.Enforcer
	maxURLBytes int // longer URLs are answered 414 undecided
	agents      *agents
	report      bool // mode: report
	auditAll    bool // audit: all
	log         zerolog.Logger
}

func (rs robotsStep) onRequest(r *http.Request, _ *goproxy.ProxyCtx, st *requestState) outcome {
	agent := rs.agents.agentFor(r, st)
	if rs.agents.header != "" {
		r.Header.Del(rs.agents.header)
	}
	st.Agent = agent
	if o, ok := rs.agents.declare(r, st); !ok { // purposes: the user's, the configured ones or the header's (usage.go)
		return o
	}
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return outcome{} // not a web URL; the transport refuses it (502)
	}
	if n := urlBytes(r.URL); n > rs.maxURLBytes {
		// Too long to decide at a bounded cost: refused undecided, in both modes.
		return refuse(longURLDecision(r.URL, agent, n, rs.maxURLBytes))
	}

	// A GET or HEAD of /robots.txt itself, spelled so: always allowed.
	d := rs.enf.Decide(r.Context(), r.URL, agent, enforce.DecideOptions{Purposes: st.Purposes, ContentUse: st.ContentUse, Method: r.Method})
	if d.Reason == enforce.ReasonClientGone {
		// The client left while robots.txt was being fetched: nothing was
		// decided, so nothing is audited or counted, and nothing is sent.
		rs.log.Debug().Str("url", d.URL).Str("origin", d.Origin).Msg("client gone while waiting for robots.txt")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: the client went away before robots.txt was fetched\n"}
	}
	st.Decision, st.Decided = d, true
	switch {
	case !d.Allowed && !rs.report:
		return refuse(explainRobots(r.URL.Host, d))
	case !d.Allowed:
		return note(audit.DecisionReported, d)
	case rs.auditAll || st.OverrideRefused != "" || st.PurposesRefused != "":
		// A refused agent or purposes override is always audited, whatever the level.
		return note(audit.DecisionAllowed, d)
	}
	return outcome{}
}

// newPoliteness builds the politeness policy of cfg. pacer and pauses may
// be nil (in-memory, this process only). In report mode the policy
// decides without acting (politeness.Config.Report).
func newPoliteness(cfg config.Config, pacer politeness.Pacer, pauses politeness.Pauses, clock enforce.Clock, log zerolog.Logger) (*politeness.Politeness, error) {
	p := cfg.Politeness
	pol, err := politeness.New(politeness.Config{
		Clock:            clock,
		Pacer:            pacer,
		Pauses:           pauses,
		Log:              log,
		IgnoreCrawlDelay: p.CrawlDelay == config.CrawlDelayIgnore,
		DefaultDelay:     p.DefaultCrawlDelay,
		MaxDelay:         p.MaxCrawlDelay,
		MaxWait:          p.MaxQueueWait,
		BackoffStart:     p.BackoffStart,
		BackoffMax:       p.BackoffMax,
		MaxConcurrency:   p.MaxConcurrency,
		Report:           cfg.Mode == config.ModeReport,
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: politeness: %w", err)
	}
	return pol, nil
}

// pacing is the politeness step. It runs after the robots.txt
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
type pacing struct {
	polite         *politeness.Politeness
	metrics        *metrics.Metrics
	life           *lifetime
	maxConcurrency int // politeness.max_concurrency
	log            zerolog.Logger
}

func (pc pacing) onRequest(r *http.Request, _ *goproxy.ProxyCtx, st *requestState) outcome {
	if !st.Decided || st.Answered || st.Decision.Origin == "" {
		return outcome{}
	}
	d := st.Decision
	pc.metrics.QueueEntered() // robotsgate_queued_requests
	// The wait also ends when Shutdown begins (proxy.go): neither
	// net/http nor goproxy (MITM) cancels r's context then. Admit waits
	// only for a crawl-delay slot or a concurrency slot: without either,
	// skip that context (a few allocations per request on the hot path).
	wctx, cancel := r.Context(), context.CancelFunc(func() {})
	if pc.polite.Delay(d.CrawlDelay) > 0 || pc.maxConcurrency > 0 {
		wctx, cancel = pc.life.untilShutdown(r.Context())
	}
	pm, ref, err := pc.polite.Admit(wctx, d.Origin, d.CrawlDelay)
	down := err != nil && shuttingDown(wctx)
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

	rd := d
	rd.Allowed = false
	rd.Reason = ref.Reason
	rd.RetryAfter = ref.RetryAfter
	rd.Detail = ref.Detail
	rd.Rule, rd.Line = "", 0 // the allowing rule did not decide this; Group (whose Crawl-delay applied) stays
	retry := "; Retry-After " + politeness.FormatRetryAfter(ref.RetryAfter) + "s"
	if pm != nil { // report mode: the request goes on
		if d.Allowed { // keep a robots refusal as the request's verdict
			st.Decision = rd
		}
		o := note(audit.DecisionReported, rd)
		o.note = retry
		return o
	}
	o := refuse(rd)
	o.note = retry
	return o
}

// onResponse is the politeness response step: it tells the policy
// how the origin answered a request that pace admitted (503 and 429
// pause the origin, honouring Retry-After; a 2xx ends a pause). Answers
// robotsgate made itself, including 502/504 for failed forwarding, are
// not the origin's and are not observed.
func (pc pacing) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	if resp == nil || st.Permit == nil || st.Answered || ctx.Error != nil {
		return resp, outcome{}
	}
	until, paused := pc.polite.Observe(context.WithoutCancel(ctx.Req.Context()), st.Permit.Origin,
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
	d.Reason = ReasonShuttingDown
	d.Rule, d.Line = "", 0
	d.RetryAfter = time.Second
	d.Detail = "robotsgate is shutting down: the request was waiting for its crawl-delay slot and was not forwarded"
	o := refuse(d)
	o.close = true
	return o
}

// auditURLBytes is how much of a URL too long to decide an audit record
// keeps, so that such requests cannot fill the audit log either.
const auditURLBytes = 1 << 10

// urlBytes returns the length of u as robotsgate decides it: scheme,
// userinfo, host, path, params and query, percent-encoded as the request
// URL is read (raw non-ASCII octets count three times, as they are
// matched). The path and query are what robots.txt rules are matched
// against; the host and userinfo are counted too, as the client chooses
// them as freely.
func urlBytes(u *url.URL) int {
	n := len(u.Scheme) + len("://") + len(u.Host)
	if u.User != nil {
		n += len(u.User.String()) + 1
	}
	if u.Opaque != "" {
		n += len(u.Opaque)
	} else {
		n += len(u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		n += 1 + len(u.RawQuery)
	}
	return n
}

// longURLDecision is the refusal of a URL of n bytes, more than max: the
// URL and origin it names are cut to auditURLBytes.
func longURLDecision(u *url.URL, agent string, n, max int) enforce.Decision {
	return enforce.Decision{
		URL: cut(enforce.RedactedURL(u)), Origin: cut(u.Scheme + "://" + u.Host), Agent: agent,
		Reason: ReasonURLTooLong,
		Detail: fmt.Sprintf("the URL has %d bytes, more than max_url_bytes (%d)", n, max),
	}
}

// cut returns s cut to auditURLBytes.
func cut(s string) string {
	if len(s) > auditURLBytes {
		return s[:auditURLBytes] + "..."
	}
	return s
}
