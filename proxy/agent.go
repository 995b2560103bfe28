package proxy

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots"
)

// Agents and purposes: who a request crawls for. The robots agent of
// each request (the configured one, the authenticated user's, an
// override header's or the User-Agent's) and its declared purposes and
// content use (the user's, the configured ones or the purposes
// header's), inherited by the requests inside an MITM session.

// maxRefusedOverride bounds how much of a refused override header the
// audit record quotes.
const maxRefusedOverride = 256

// agentFor returns the robots agent (product token) for r under a, by precedence:
// r's own override header; for a request inside an MITM session, the
// override header of the session's CONNECT (st.Session); the configured
// agent; the crawler token of r's User-Agent ([robots.CrawlerToken]). An
// override is honoured only when [access.Agents.OverrideAllowed]; a refused one that names
// another agent than the configured one is kept in st.OverrideRefused for
// the audit (requests inside an MITM session inherit the CONNECT's). An
// honoured override decides even when it names no valid token: "" means
// only the "*" group applies. It records r's override in st, so that
// requests inside a CONNECT's session inherit it.
func agentFor(a *access.Agents, r *http.Request, st *requestState) string {
	sess := st.Session
	identify(r, st)
	configured := a.Configured
	if id := st.identity(); id.Agent != "" { // the user's agent is authoritative like the configured one
		configured = id.Agent
	}
	if v, ok := a.Override(r.Header); ok {
		tok := robots.CrawlerToken(v)
		switch {
		case a.OverrideAllowed(configured):
			st.Overridden, st.AgentOverride = true, tok
		case !strings.EqualFold(tok, configured):
			st.OverrideRefused = answer.TruncateUTF8(v, maxRefusedOverride)
		}
	}
	if st.OverrideRefused == "" && sess != nil {
		st.OverrideRefused = sess.OverrideRefused
	}
	switch {
	case st.Overridden:
		return st.AgentOverride
	case sess != nil && sess.Overridden:
		return sess.AgentOverride
	case configured != "":
		return configured
	}
	return robots.CrawlerToken(r.Header.Get("User-Agent"))
}

// identify sets st.Identity, once: the identity of the user r
// authenticated as ([access.IdentityFrom]), or, for a request inside an
// MITM session, the CONNECT's.
func identify(r *http.Request, st *requestState) {
	if st.Identified {
		return
	}
	st.Identified = true
	if id, ok := access.IdentityFrom(r.Context()); ok {
		st.Identity = new(access.Identity) // not &id: id would be allocated for every request
		*st.Identity = id
	} else if st.Session != nil {
		st.Identity = st.Session.Identity // the session's is never changed
	}
}

// declare sets, under a, st.ContentUse, the user's content use (credentials file
// content_use=), else the configured one, and st.Purposes, the purposes
// r is decided for: the user's (credentials file purposes=), else the
// configured ones; replaced by
// r's purposes header (or, inside an MITM session, the CONNECT's) only
// when allow_agent_override is set. The header is always removed from
// r. A refused header that names other purposes is kept in
// st.PurposesRefused for the audit. An allowed header naming an unknown
// purpose refuses r (400 invalid-purpose): ok is false and o says so.
func declare(a *access.Agents, r *http.Request, st *requestState) (o outcome, ok bool) {
	identify(r, st)
	st.ContentUse = a.ContentUse
	id := st.identity()
	if id.HasContentUse {
		st.ContentUse = id.ContentUse
	}
	set := a.Purposes
	if id.HasPurposes {
		set = id.Purposes
	}
	sess := st.Session
	if a.PurposeHeader != "" {
		v := strings.TrimSpace(strings.Join(r.Header.Values(a.PurposeHeader), ", "))
		r.Header.Del(a.PurposeHeader)
		if v != "" {
			got, err := access.ParsePurposeHeader(v)
			switch {
			case a.AllowOverride && err != nil:
				d := enforce.Decision{Reason: answer.ReasonInvalidPurpose, URL: enforce.RedactedURL(r.URL), Agent: st.Agent, Purposes: set,
					Detail: a.PurposeHeader + ": " + answer.CutTo(err.Error(), maxRefusedOverride)}
				d.Origin, _ = enforce.Origin(r.URL)
				return refuse(d), false
			case a.AllowOverride:
				st.PurposesOverridden, st.PurposesOverride = true, got
			case err != nil || got != set:
				st.PurposesRefused = answer.TruncateUTF8(v, maxRefusedOverride)
			}
		}
	}
	if st.PurposesRefused == "" && sess != nil {
		st.PurposesRefused = sess.PurposesRefused
	}
	switch {
	case st.PurposesOverridden:
		set = st.PurposesOverride
	case sess != nil && sess.PurposesOverridden:
		set = sess.PurposesOverride
	}
	st.Purposes = set
	return outcome{}, true
}

// Bounds on what clients write: every string a client chooses that
// reaches an audit record, an answer or the status page is bounded.
//
// The robots agent a client names (the crawler token of
// its User-Agent, or an honoured override header) is refused 431
// agent-too-long when it is longer than maxAgentBytes, before it is
// decided: it would otherwise be copied whole into the audit record, the
// refusal, the status page and its event streams. It is refused rather
// than cut, as a cut name could match another robots.txt group.

// maxAgentBytes bounds the robots agent a client may name: product tokens
// are short words (RFC 9309), far below it.
const maxAgentBytes = robots.MaxAgentBytes

// agentQuoteBytes is how much of an agent too long an audit record and
// the refusal keep.
const agentQuoteBytes = 64

// agentTooLong returns the refusal of r when agent, the robots agent
// picked for it, is longer than [maxAgentBytes]; ok is false then.
func agentTooLong(r *http.Request, agent string) (o outcome, ok bool) {
	if len(agent) <= maxAgentBytes {
		return outcome{}, true
	}
	d := enforce.Decision{
		Reason: answer.ReasonAgentTooLong, Agent: answer.CutTo(agent, agentQuoteBytes),
		Detail: fmt.Sprintf("the agent (product token) has %d bytes, more than %d", len(agent), maxAgentBytes),
	}
	if r.URL != nil {
		d.URL = cut(enforce.RedactedURL(r.URL))
		if o, err := enforce.Origin(r.URL); err == nil {
			d.Origin = cut(o)
		}
	}
	return refuse(d), false
}
