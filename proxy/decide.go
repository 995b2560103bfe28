package proxy

import (
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots"
)

// Modes and audit levels (Config.Mode, Config.Audit).
const (
	ModeEnforce = "enforce" // refuse what robots.txt disallows
	ModeReport  = "report"  // decide and audit, but forward everything

	AuditBlocked = "blocked" // audit refusals (and report-mode would-be refusals)
	AuditAll     = "all"     // audit every decision
)

// agentOverride returns the product token of r's agent override header,
// "" when the header is absent, empty or disabled.
func (s *Server) agentOverride(r *http.Request) string {
	if s.agentHeader == "" {
		return ""
	}
	if v := strings.TrimSpace(r.Header.Get(s.agentHeader)); v != "" {
		return robots.ProductToken(v)
	}
	return ""
}

// agentFor returns the robots agent (product token) for r, by precedence:
// r's own override header; for a request inside an MITM session, the
// override header of the session's CONNECT (st.Parent); the configured
// agent; the product token of r's User-Agent. "" means no agent is known:
// only the "*" group applies. It records r's override in st, so that
// requests inside a CONNECT's session inherit it.
func (s *Server) agentFor(r *http.Request, st *requestState) string {
	st.AgentOverride = s.agentOverride(r)
	if st.AgentOverride != "" {
		return st.AgentOverride
	}
	if parent, ok := st.Parent.(*requestState); ok && parent.AgentOverride != "" {
		return parent.AgentOverride
	}
	if s.cfg.Agent != "" {
		return s.cfg.Agent
	}
	return robots.ProductToken(r.Header.Get("User-Agent"))
}

// decideRobots is the robots.txt request hook: it picks the agent, strips
// the override header, asks the Enforcer, audits the decision and, in
// enforce mode, answers a refusal with a 403 so that the request never
// leaves (with a 502 when the refusal is really an origin whose
// certificate failed verification: untrustedRobots). A client's own request for /robots.txt is always allowed.
func (s *Server) decideRobots(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := stateOf(ctx)
	agent := s.agentFor(r, st)
	if s.agentHeader != "" {
		r.Header.Del(s.agentHeader)
	}
	st.Agent = agent
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return r, nil // not a web URL; the transport refuses it (502)
	}
	if resp := s.refuseLongURL(r, agent); resp != nil { // 414, before any matching (urllimit.go)
		st.Answered = true
		return r, resp
	}

	d := s.enf.Decide(r.Context(), r.URL, agent) // /robots.txt itself: always allowed
	if d.Reason == enforce.ReasonClientGone {
		// The client left while robots.txt was being fetched: nothing was
		// decided, so nothing is audited or counted, and nothing is sent.
		st.Answered = true
		s.log.Debug().Str("url", d.URL).Str("origin", d.Origin).Msg("client gone while waiting for robots.txt")
		h := make(http.Header)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		return r, newResponse(r, http.StatusServiceUnavailable, h, "robotsgate: the client went away before robots.txt was fetched\n")
	}
	st.Decision, st.Decided = d, true

	blocked := !d.Allowed && s.cfg.Mode != ModeReport
	var (
		resp      *http.Response
		untrusted error // [https] the origin's certificate failed verification (connect.go)
	)
	if blocked {
		resp = Refuse(r, http.StatusForbidden, d)
		if untrusted = untrustedRobots(r.URL.Host, d); untrusted != nil {
			resp = upstreamError(r, untrusted)
		}
	}
	if !d.Allowed || s.cfg.Audit == AuditAll {
		e := EventFromDecision(r.RemoteAddr, r.Method, d)
		switch {
		case d.Allowed:
			e.Decision = DecisionAllowed
		case blocked:
			// The record says what the client got: a 403, or the 502 of
			// an origin whose certificate failed verification.
			e.Decision, e.Status = DecisionBlocked, resp.StatusCode
			if untrusted != nil {
				e.Detail = untrusted.Error()
			}
		default:
			e.Decision = DecisionReported
		}
		s.record(e)
	}
	if !blocked {
		return r, nil
	}
	st.Answered = true
	return r, resp
}
