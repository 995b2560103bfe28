package proxy

import (
	"context"
	"net/http"

	"github.com/elazarl/goproxy"
)

// The requests inside MITM sessions counted as running for Shutdown
// (the count and the contexts Shutdown ends: [conns.Lifetime]).

// track counts a request as running; enter runs it first. A request inside an MITM session
// does not pass through [conns.Lifetime.Wrap], and its context (rooted in
// [context.Background]) ends with neither the client's connection nor
// Shutdown: track counts it as running until goproxy ends that context
// (after the response was written), and makes the context end at
// Shutdown's deadline too. Plain-HTTP requests need neither: Wrap counts
// them, and net/http cancels their context when Shutdown closes their
// connection.
//
// On a tracked connection the session's connection does this
// ([conns.Info.RequestRead]), with no goroutine and no registration with
// goproxy's context or the hard one per request. Elsewhere (an untracked
// connection) the request's context is a child of goproxy's, and a watch
// per request does the rest ([conns.Lifetime.TrackAlone]).
func (s *Server) track(r *http.Request, ctx *goproxy.ProxyCtx) *http.Request {
	sess, inMITM := ctx.UserData.(*session) // the CONNECT's (enter creates the request's state next)
	if !inMITM {
		return r
	}
	rctx, ok := sess.Conn.RequestRead(r.Context(), s.life) // the head's limits no longer apply
	if !ok {
		var cancel context.CancelCauseFunc
		rctx, cancel = context.WithCancelCause(r.Context())
		s.life.TrackAlone(rctx, cancel)
	}
	r = r.WithContext(rctx)
	ctx.Req = r
	return r
}
