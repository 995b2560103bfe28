package proxy

import (
	"net/http"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The state of a request, carried from its request steps to its
// response steps in goproxy's ctx.UserData ([stateOf]), and the
// [session] a CONNECT shares with the requests of its MITM session.

// requestState is one request's state, carried from request hooks to
// response hooks in goproxy's ctx.UserData. What a CONNECT shares with
// the requests of its MITM session is their [session].
type requestState struct {
	// (The fields are in an order that leaves little padding: the state
	// is made for every request, and 1 016 bytes or less take the
	// allocator's 1 024-byte class.)
	Start  time.Time // when robotsgate received the request
	Client string    // client address
	Agent  string    // the agent decided for ("" = only "*")
	// AgentOverride is the agent named by the request's override header
	// (Config.AgentHeader), "" when none; for a CONNECT, the requests
	// inside its MITM session inherit it through their [session] (agentFor).
	AgentOverride string
	// OverrideRefused is the value of an override header refused because
	// an agent is configured (agentFor), for the audit record; requests
	// inside an MITM session inherit the CONNECT's.
	OverrideRefused string
	// Identity is the authenticated user's (credentials file), inherited
	// by the requests inside a CONNECT's MITM session; set by identify
	// (Identified says it ran), nil for none (read it with identity):
	// most requests have none.
	Identity *access.Identity
	// Grant is what the access control admitted the request with; a
	// CONNECT's stays with its MITM session ([readmit.onRequest]).
	Grant access.Grant
	// Overridden says that an override header was honoured (AgentOverride
	// may then be "": only "*" applies).
	Overridden bool
	Identified bool
	// Purposes are the declared purposes the request is decided for
	// (declare). PurposesOverride is those of an honoured purposes
	// header (PurposesOverridden), inherited inside an MITM session;
	// PurposesRefused the value of a refused one, for the audit record.
	// ContentUse is the declared content use the request is decided for
	// (declare): the user's, else the configured one.
	Purposes           aipref.Set
	PurposesOverride   aipref.Set
	PurposesOverridden bool
	ContentUse         aipref.Use

	// Decided says that Decision holds the robots.txt decision.
	Decided bool
	// RangeRemoved says that [wholeStep] removed the request's Range headers:
	// the audit records of its response say so.
	RangeRemoved bool
	// Answered is set when a request hook answered the request itself
	// (a refusal); the origin saw nothing.
	Answered        bool
	PurposesRefused string

	Decision enforce.Decision // the robots.txt decision, valid when Decided
	// SignedKeyID is the keyid of the signature [signStep] added, "" when
	// the request was not signed.
	SignedKeyID string

	// Permit is the politeness admission of a forwarded request (nil when
	// [pacing.onRequest] did not admit it); it is released when the
	// request ends.
	Permit *politeness.Permit

	// Live is the settings the request is served with: those current
	// when it entered (live.go).
	Live *live

	// Session is, for a request inside an MITM session, what its CONNECT
	// shares with it; nil outside one.
	Session *session
	// Redirected is, for a request that came in on the transparent
	// listener, its redirected connection (transparent.go); nil for one
	// that came in on the proxy listener.
	Redirected *redirected

	// Body is the body forward's round trip gave the response (nil when
	// the request was not forwarded), the one goproxy's MITM loop checks
	// the final response's body against (forward.go).
	Body *copyBody
	// Pay is the payment state of a request pay mode may pay for
	// (payment.go), nil for others.
	Pay *payState
}

// session is what the requests inside one CONNECT's MITM session share
// with it, fixed when the CONNECT is intercepted ([Server.startMITM]):
// who the CONNECT was admitted as and crawls for, the host:port its
// requests must name and the connection they arrive on. goproxy hands
// it to each request of the session in ctx.UserData.
type session struct {
	Client string       // the CONNECT's client address
	Grant  access.Grant // what the access control admitted the CONNECT with ([readmit.onRequest])
	Agent  string       // the CONNECT's agent, for refusals made before a request's own is picked
	// The CONNECT's agent override, honoured or refused, and its
	// purposes override (agentFor, declare), which its requests inherit.
	AgentOverride      string
	Overridden         bool
	OverrideRefused    string
	PurposesOverride   aipref.Set
	PurposesOverridden bool
	PurposesRefused    string
	Identity           access.Identity // the user the CONNECT authenticated as (identify)
	// Target is the CONNECT's canonical "host:port" (lower-case host);
	// requests inside the session must name the same
	// ([destination.onRequest]).
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
	return &session{Client: st.Client, Grant: st.Grant, Agent: st.Agent,
		AgentOverride: st.AgentOverride, Overridden: st.Overridden, OverrideRefused: st.OverrideRefused,
		PurposesOverride: st.PurposesOverride, PurposesOverridden: st.PurposesOverridden, PurposesRefused: st.PurposesRefused,
		Identity: st.identity(), Target: target, Redirected: st.Redirected, Conn: ci}
}

// newRequestState starts the state of r (nil for none), served with the
// settings l (nil: those current when a step first needs them), inside
// the MITM session sess (nil outside one). A request on a redirected
// connection has that connection in its context (transparent.go), a
// request inside a session the session's.
func newRequestState(r *http.Request, sess *session, l *live) *requestState {
	st := &requestState{Start: time.Now(), Session: sess, Live: l}
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

// stateOf returns ctx's request state, creating it if [Server.enter] did
// not run (a CONNECT).
func stateOf(ctx *goproxy.ProxyCtx) *requestState {
	if st, ok := ctx.UserData.(*requestState); ok {
		return st
	}
	sess, _ := ctx.UserData.(*session)
	st := newRequestState(ctx.Req, sess, nil)
	ctx.UserData = st
	return st
}
