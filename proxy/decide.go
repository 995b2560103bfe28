package proxy

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots"
)

// Modes and audit levels (Config.Mode, Config.Audit).
const (
	ModeEnforce = "enforce" // refuse what robots.txt disallows
	ModeReport  = "report"  // decide and audit, but forward everything

	AuditBlocked = "blocked" // audit refusals (and report-mode would-be refusals)
	AuditAll     = "all"     // audit every decision
)

// maxRefusedOverride bounds how much of a refused override header the
// audit record quotes.
const maxRefusedOverride = 256

// agentOverride returns the value of r's agent override header
// (Config.AgentHeader; every line of it, trimmed) and whether r carries a
// non-empty one. It is always false when the header is disabled.
func (s *Server) agentOverride(r *http.Request) (string, bool) {
	if s.agentHeader == "" {
		return "", false
	}
	v := strings.TrimSpace(strings.Join(r.Header.Values(s.agentHeader), ", "))
	return v, v != ""
}

// overrideAllowed reports whether a client may choose its agent with the
// override header: always when no agent is configured (the agent then
// comes from the User-Agent, which the client chooses just as freely), and
// against a configured agent only with Config.AllowAgentOverride.
func (s *Server) overrideAllowed() bool {
	return s.cfg.Agent == "" || s.cfg.AllowAgentOverride
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
func (s *Server) agentFor(r *http.Request, st *requestState) string {
	parent, _ := st.Parent.(*requestState)
	if v, ok := s.agentOverride(r); ok {
		tok := robots.CrawlerToken(v)
		switch {
		case s.overrideAllowed():
			st.Overridden, st.AgentOverride = true, tok
		case !strings.EqualFold(tok, s.cfg.Agent):
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
	case s.cfg.Agent != "":
		return s.cfg.Agent
	}
	return robots.CrawlerToken(r.Header.Get("User-Agent"))
}

// truncateUTF8 returns s cut to at most n bytes, not inside a UTF-8
// sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// decideRobots is the robots.txt step: it picks the agent, strips the
// override header (honoured or not) and asks the Enforcer. In enforce
// mode a refusal is answered with a 403 so that the request never leaves
// (with a 502 when the refusal is really an origin whose certificate
// failed verification: untrustedRobots). Refusals, report-mode would-be
// refusals, refused agent overrides and, with audit: all, every decision
// are audited. A client's own request for /robots.txt is always allowed.
func (s *Server) decideRobots(r *http.Request, ctx *goproxy.ProxyCtx, st *requestState) outcome {
	agent := s.agentFor(r, st)
	if s.agentHeader != "" {
		r.Header.Del(s.agentHeader)
	}
	st.Agent = agent
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return outcome{} // not a web URL; the transport refuses it (502)
	}

	d := s.enf.Decide(r.Context(), r.URL, agent) // /robots.txt itself: always allowed
	if d.Reason == enforce.ReasonClientGone {
		// The client left while robots.txt was being fetched: nothing was
		// decided, so nothing is audited or counted, and nothing is sent.
		s.log.Debug().Str("url", d.URL).Str("origin", d.Origin).Msg("client gone while waiting for robots.txt")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: the client went away before robots.txt was fetched\n"}
	}
	st.Decision, st.Decided = d, true
	switch {
	case !d.Allowed && s.cfg.Mode != ModeReport:
		o := refuse(http.StatusForbidden, d)
		o.err = untrustedRobots(r.URL.Host, d) // nil unless the origin's certificate failed verification (connect.go)
		return o
	case !d.Allowed:
		return note(audit.DecisionReported, d)
	case s.cfg.Audit == AuditAll || st.OverrideRefused != "":
		// A refused agent override is always audited, whatever the level.
		return note(audit.DecisionAllowed, d)
	}
	return outcome{}
}
