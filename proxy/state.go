package proxy

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The state of a request, carried from its request steps to its
// response steps (in goproxy's ctx.UserData: [stateOf], engine.go), and the
// [session] a CONNECT shares with the requests of its MITM session; and
// how its caller's part is filled: who a request crawls for. The robots
// agent of each request (the configured one, the authenticated user's, an
// override header's or the User-Agent's: agentFor) and its declared
// purposes and content use (the user's, the configured ones or the
// purposes header's: declare), inherited by the requests inside an MITM
// session; the user's identity (identify).

// requestState is one request's state, carried from request hooks to
// response hooks in goproxy's ctx.UserData. It has three parts, each a
// struct of its own, and the request's own fields: the [caller] (who
// sends the request and crawls for whom, also a CONNECT's part of its
// [session]), the [verdict] (what the request is decided for, and what
// was decided) and the [via] (the connection it came on). Each step's
// comment says which parts it reads and which it writes.
type requestState struct {
	// (The fields are in an order that leaves little padding: the state
	// is made for every request, and 1 016 bytes or less take the
	// allocator's 1 024-byte class; TestRequestStateSize checks it.)
	// Req is the request as the steps see it: a request step that
	// replaces it (another context) sets Req to the new one, which the
	// hook adapter hands to goproxy (engine.go); the response steps see
	// the request goproxy forwarded.
	Req *http.Request
	// Err is the forwarding error goproxy reported, for the response
	// steps; nil when the origin answered, or before forwarding.
	Err error
	caller
	verdict
	via

	// Permit is the politeness admission of a forwarded request (nil when
	// [pacingStep.onRequest] did not admit it); it is released when the
	// request ends.
	Permit *politeness.Permit

	// Live is the settings the request is served with: those current
	// when it entered (reload.go).
	Live *live

	// Body is the body forward's round trip gave the response (nil when
	// the request was not forwarded), the one goproxy's MITM loop checks
	// the final response's body against (forward.go).
	Body *copyBody
}

// caller is who sends a request and whom it crawls for: its client, what
// the access control admitted it with, the user it authenticated as, the
// agent it is decided for and the overrides it asked for. A CONNECT's
// caller is kept in its [session]: the requests inside the MITM session
// inherit its identity and overrides ([agentFor], identify, declare).
type caller struct {
	Client string // client address
	Agent  string // the agent decided for ("" = only "*")
	// AgentOverride is the agent named by the request's override header
	// (Config.AgentHeader), "" when none; for a CONNECT, the requests
	// inside its MITM session inherit it through their [session] ([agentFor]).
	AgentOverride string
	// OverrideRefused is the value of an override header refused because
	// an agent is configured ([agentFor]), for the audit record; requests
	// inside an MITM session inherit the CONNECT's.
	OverrideRefused string
	// PurposesRefused is the value of a refused purposes header, for the
	// audit record (declare).
	PurposesRefused string
	// Identity is the authenticated user's (credentials file), inherited
	// by the requests inside a CONNECT's MITM session; set by identify
	// (Identified says it ran), nil for none (read it with identity):
	// most requests have none. It is never changed once set.
	Identity *access.Identity
	// Grant is what the access control admitted the request with; a
	// CONNECT's stays with its MITM session ([readmitStep.onRequest]).
	Grant access.Grant
	// PurposesOverride is the purposes of an honoured purposes header
	// (PurposesOverridden), inherited inside an MITM session (declare).
	PurposesOverride aipref.Set
	// Overridden says that an override header was honoured (AgentOverride
	// may then be "": only "*" applies).
	Overridden         bool
	PurposesOverridden bool
	Identified         bool
}

// verdict is what a request is decided for and what was decided about
// it.
type verdict struct {
	Decision enforce.Decision // the robots.txt decision, valid when Decided
	// SignedKeyID is the keyid of the signature [signStep] added, "" when
	// the request was not signed.
	SignedKeyID string
	// Purposes are the declared purposes the request is decided for
	// (declare); ContentUse the declared content use (declare): the
	// user's, else the configured one.
	Purposes   aipref.Set
	ContentUse aipref.Use
	// Decided says that Decision holds the robots.txt decision.
	Decided bool
	// RangeRemoved says that [wholeStep] removed the request's Range headers:
	// the audit records of its response say so.
	RangeRemoved bool
	// Answered is set when a request hook answered the request itself
	// (a refusal); the origin saw nothing.
	Answered bool
}

// via is the connection a request came on, beside its client address.
type via struct {
	// Session is, for a request inside an MITM session, what its CONNECT
	// shares with it; nil outside one.
	Session *session
	// Redirected is, for a request that came in on the transparent
	// listener, its redirected connection (transparent.go); nil for one
	// that came in on the proxy listener.
	Redirected *redirected
}

// session is what the requests inside one CONNECT's MITM session share
// with it, fixed when the CONNECT is intercepted ([Server.startMITM]):
// who the CONNECT was admitted as and crawls for (its [caller]; its
// Agent is used for refusals made before a request's own is picked), the
// host:port its requests must name and the connection they arrive on.
// goproxy hands it to each request of the session in ctx.UserData.
type session struct {
	caller
	// Target is the CONNECT's canonical "host:port" (lower-case host);
	// requests inside the session must name the same
	// ([destinationStep.onRequest]).
	Target string
	// Redirected is the redirected TLS connection the CONNECT was made
	// up for (transparent.go), nil for a CONNECT on the proxy listener.
	Redirected *redirected
	// Conn is the client connection's tracking info (nil when
	// untracked): HTTP/1.0 answers end the session through it
	// (forward.go).
	Conn *conns.Info
}

// newSession is the session of the CONNECT of st, intercepted to
// target, whose client connection is ci (nil when untracked).
func newSession(st *requestState, target string, ci *conns.Info) *session {
	return &session{caller: st.caller, Target: target, Redirected: st.Redirected, Conn: ci}
}

// newRequestState starts the state of r (nil for none), served with the
// settings l (nil: those current when a step first needs them), inside
// the MITM session sess (nil outside one). A request on a redirected
// connection has that connection in its context (transparent.go), a
// request inside a session the session's.
func newRequestState(r *http.Request, sess *session, l *live) *requestState {
	st := &requestState{Req: r, via: via{Session: sess}, Live: l}
	if r != nil {
		st.Client, st.Grant = r.RemoteAddr, access.GrantFrom(r.Context())
		st.Redirected, _ = r.Context().Value(redirectedKey{}).(*redirected)
	}
	if st.Redirected == nil && sess != nil {
		st.Redirected = sess.Redirected
	}
	return st
}

// identity is the user the request authenticated as (identify), the
// zero Identity for none.
func (st *requestState) identity() access.Identity {
	if st.Identity == nil {
		return access.Identity{}
	}
	return *st.Identity
}

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
