package proxy

import (
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/robots"
)

// Modes and audit levels (Config.Mode, Config.Audit).
const (
	ModeEnforce = "enforce" // refuse what robots.txt disallows
	ModeReport  = "report"  // decide and audit, but forward everything

	AuditBlocked = "blocked" // audit refusals (and report-mode would-be refusals)
	AuditAll     = "all"     // audit every decision
)

// agentFor returns the robots agent (product token) for r: the override
// header's value when present, else the configured agent, else the product
// token of r's User-Agent. "" means no agent is known: only the "*" group
// applies.
func (s *Server) agentFor(r *http.Request) string {
	if s.agentHeader != "" {
		if v := strings.TrimSpace(r.Header.Get(s.agentHeader)); v != "" {
			return robots.ProductToken(v)
		}
	}
	if s.cfg.Agent != "" {
		return s.cfg.Agent
	}
	return robots.ProductToken(r.Header.Get("User-Agent"))
}

// decideRobots is the robots.txt request hook: it picks the agent, strips
// the override header, asks the Enforcer, audits the decision and, in
// enforce mode, answers a refusal with a 403 so that the request never
// leaves. A client's own request for /robots.txt is always allowed.
func (s *Server) decideRobots(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	st := stateOf(ctx)
	agent := s.agentFor(r)
	if s.agentHeader != "" {
		r.Header.Del(s.agentHeader)
	}
	st.Agent = agent
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return r, nil // not a web URL; the transport refuses it (502)
	}

	d := s.enf.Decide(r.Context(), r.URL, agent) // /robots.txt itself: always allowed
	st.Decision, st.Decided = d, true

	blocked := !d.Allowed && s.cfg.Mode != ModeReport
	if !d.Allowed || s.cfg.Audit == AuditAll {
		e := EventFromDecision(r.RemoteAddr, r.Method, d)
		switch {
		case d.Allowed:
			e.Decision = DecisionAllowed
		case blocked:
			e.Decision, e.Status = DecisionBlocked, http.StatusForbidden
		default:
			e.Decision = DecisionReported
		}
		s.record(e)
	}
	if !blocked {
		return r, nil
	}
	st.Answered = true
	return r, Refuse(r, http.StatusForbidden, d)
}
