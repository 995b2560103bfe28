package proxy

import (
	"net/http"

	"net/url"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The robots.txt step: the decision of [enforce.Enforcer.Decide] on a
// proxied request, and what its refusal says. The refusal's status and
// Proxy-Status come from the table of reasons (reasons.go), its body
// from decision.go; Server.settle (refuse.go) writes both and the audit
// record.

// robotsStep is the robots.txt step: it picks the agent, strips the
// override header (honoured or not) and asks the Enforcer. In enforce
// mode a refusal is answered with a 403 so that the request never leaves
// (with a 502 when the refusal is really an origin whose certificate
// failed verification: [untrustedRobots]). Refusals, report-mode would-be
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
	sites       []config.Site // per-site exceptions (sites.go)
	unknownDeny bool          // usage.unknown: deny
}

// decide is the decision of a request for u by agent with the options
// o, made by decide, under this configuration's site exceptions
// ([siteDecision]) and usage.unknown; purposes are those it was decided
// for.
func (rs *robotsStep) decide(u *url.URL, agent string, o enforce.DecideOptions,
	decide func(enforce.DecideOptions) enforce.Decision) (d enforce.Decision, purposes aipref.Set) {
	o.UnknownDeny = rs.unknownDeny
	return siteDecision(rs.sites, u, agent, o, decide)
}

func (rs robotsStep) onRequest(r *http.Request, _ *goproxy.ProxyCtx, st *requestState) outcome {
	agent := rs.agents.agentFor(r, st)
	if rs.agents.header != "" {
		r.Header.Del(rs.agents.header)
	}
	st.Agent = agent
	if o, ok := rs.agents.declare(r, st); !ok { // purposes: the user's, the configured ones or the header's (agent.go)
		return o
	}
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return outcome{} // not a web URL; the transport refuses it (502)
	}
	if n := urlBytes(r.URL); n > rs.maxURLBytes {
		// Too long to decide at a bounded cost: refused undecided, in both modes.
		return refuse(longURLDecision(r.URL, agent, n, rs.maxURLBytes))
	}

	// Per-site exceptions (sites.go), then robots.txt; a GET or HEAD of
	// /robots.txt itself, spelled so, is always allowed.
	o := enforce.DecideOptions{Purposes: st.Purposes, ContentUse: st.ContentUse, Method: r.Method}
	d, purposes := rs.decide(r.URL, agent, o, func(o enforce.DecideOptions) enforce.Decision {
		return rs.enf.Decide(r.Context(), r.URL, agent, o)
	})
	st.Purposes = purposes
	if d.Reason == enforce.ReasonClientGone {
		// The client left while robots.txt was being fetched: nothing was
		// decided, so nothing is audited or counted, and nothing is sent.
		rs.log.Debug().Str("url", d.URL).Str("origin", d.Origin).Msg("client gone while waiting for robots.txt")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: the client went away before robots.txt was fetched\n"}
	}
	st.Decision, st.Decided = d, true
	switch {
	case d.Reason == ReasonSiteException: // written permission: always audited
		return note(audit.DecisionAllowed, d)
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

// untrustedRobots explains the refusal d when the origin's robots.txt
// could not be fetched because its certificate failed verification: the
// request could not have been forwarded either, and the operator can
// trust the origin's root. It returns "" for every other decision.
func untrustedRobots(host string, d enforce.Decision) string {
	if d.Allowed || d.Reason != enforce.ReasonOriginUnreachable || d.RobotsErrKind != enforce.FetchTLSUntrusted {
		return ""
	}
	return "the certificate of " + host + " failed verification when fetching its robots.txt " +
		"(robotsgate does not connect to unverified servers; if you trust it, add its root CA to https.upstream_roots)"
}

// explainRobots adds to the refusal d of a request to host what an
// untrusted origin certificate means ([untrustedRobots]).
func explainRobots(host string, d enforce.Decision) enforce.Decision {
	if why := untrustedRobots(host, d); why != "" {
		d.Detail = why + ": " + d.Detail
	}
	return d
}
