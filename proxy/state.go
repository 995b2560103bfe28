package proxy

import (
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The state of a request, carried from its request steps to its
// response steps (in goproxy's ctx.UserData: [stateOf], engine.go), and the
// [session] a CONNECT shares with the requests of its MITM session.

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
// inherit its identity and overrides (agentFor, identify, declare).
type caller struct {
	Client string // client address
	Agent  string // the agent decided for ("" = only "*")
	// AgentOverride is the agent named by the request's override header
	// (Config.AgentHeader), "" when none; for a CONNECT, the requests
	// inside its MITM session inherit it through their [session] (agentFor).
	AgentOverride string
	// OverrideRefused is the value of an override header refused because
	// an agent is configured (agentFor), for the audit record; requests
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
