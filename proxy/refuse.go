package proxy

import (
	"errors"
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// outcome is what a step decided about a request. The zero outcome lets
// the request go on. Every refusal, and every decision that is audited
// without refusing, is an outcome that [Server.settle] carries out: the
// steps never build audit records or answers themselves.
type outcome struct {
	// auditAs is what happens: "" nothing (go on, nothing audited);
	// [audit.DecisionBlocked]: robotsgate answers the request itself, with
	// status, and the origin sees nothing; [audit.DecisionAllowed] or
	// [audit.DecisionReported]: the decision is audited and the request
	// goes on.
	auditAs string
	// status is the status of the refusal, or, for an audited decision
	// that lets the request go on, the origin's status when known.
	status int
	// d is the decision (reason, detail, Retry-After, ...); nil only in
	// an outcome that goes on or a gone one. A pointer keeps the outcome,
	// returned by every step, small; an outcome's copy shares it.
	d *enforce.Decision
	// auditDetail is added to the audit record's detail (not to the answer).
	auditDetail string
	// err is, for an upstream failure ([upstreamOutcome]), the forwarding
	// error: it picks the Proxy-Status error type.
	err error
	// header holds headers added to the refusal (X-Robotsgate-Index).
	header http.Header
	// close asks the client to close the connection after the refusal.
	close bool
	// gone, with status, answers a request whose client left: a short
	// text, nothing audited, the decision unchanged.
	gone string
	// pay is the payment record of the audit record (payment.go).
	pay *audit.Payment
}

// settles reports whether [Server.settle] has anything to do for o: an
// answer or an audit record. The zero outcome of most steps skips the
// call (and the copy of o it takes).
func (o *outcome) settles() bool { return o.gone != "" || o.auditAs != "" }

// refuse is the outcome of refusing the request because of d, with the
// status of d's reason ([answer.Status]).
func refuse(d enforce.Decision) outcome {
	return outcome{auditAs: audit.DecisionBlocked, status: answer.Status(d), d: &d}
}

// note is the outcome of auditing d as auditAs (an audit decision) while
// the request goes on.
func note(auditAs string, d enforce.Decision) outcome {
	return outcome{auditAs: auditAs, d: &d}
}

// onResponseVerdict is the outcome of a response step whose check found
// resp breaks d: refused with header (resp's body closed) when enforcing,
// otherwise audited as reported with resp's status while resp goes on.
func onResponseVerdict(resp *http.Response, d enforce.Decision, enforcing bool, header http.Header) (*http.Response, outcome) {
	if !enforcing {
		o := note(audit.DecisionReported, d)
		o.status = resp.StatusCode
		return resp, o
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	o := refuse(d)
	o.header = header
	return resp, o
}

// settle carries out the outcome o of a step for the request r with state
// st: it writes the audit record, marks the state and returns
// robotsgate's answer (nil when the request goes on). Decisions on a
// CONNECT are counted in the metrics here, since a CONNECT does not reach
// the response step that counts the others ([inflightStep.onResponse]).
// State: reads the caller, the verdict and the via; writes the verdict
// (Answered, Decision, Decided).
func (s *Server) settle(r *http.Request, st *requestState, o outcome) *http.Response {
	if o.gone != "" {
		st.Answered = true
		h := make(http.Header)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		answer.SetProxyStatus(h, answer.PSInternal, strings.TrimSpace(o.gone))
		return answer.New(r, o.status, h, o.gone)
	}
	if o.auditAs == "" {
		return nil
	}
	connect := r.Method == http.MethodConnect
	if connect {
		s.metrics.Decision(*o.d)
	}
	var resp *http.Response
	status := o.status
	if o.auditAs == audit.DecisionBlocked {
		st.Answered = true
		if o.err == nil { // an upstream failure leaves the robots decision counted, and counts as an upstream error
			st.Decision, st.Decided = *o.d, true
		}
		resp = refusal(r, o, connect)
		status = resp.StatusCode
	}
	e := answer.Event(r.RemoteAddr, r.Method, *o.d, o.auditAs, status)
	e.Detail += o.auditDetail
	e.Payment = o.pay
	if st.RangeRemoved {
		e.Detail += "; Range removed from the request"
	}
	if st.Live != nil {
		e.Mode = string(st.Live.cfg.Mode)
	}
	e.AgentOverrideRefused = st.OverrideRefused
	e.PurposesOverrideRefused = st.PurposesRefused
	identify(r, st)
	e.User, e.Listener = st.identity().User, listenerProxy
	e.SignedKeyID = s.signedKeyID(st, o) // (sign.go)
	if st.Redirected != nil {
		e.Listener = listenerTransparent
	}
	s.record(e)
	return resp
}

// The listeners an audit record names ([audit.Event.Listener]).
const (
	listenerProxy       = "proxy"
	listenerTransparent = "transparent"
)

// refusal is robotsgate's answer to r refused by o.
func refusal(r *http.Request, o outcome, connect bool) *http.Response {
	resp := answer.Refusal(r, o.status, *o.d, answer.ProxyStatusError(*o.d, o.err))
	for k, v := range o.header {
		resp.Header[k] = v
	}
	if o.close || connect {
		resp.Close = true
	}
	if connect {
		resp.Header.Set("Connection", "close")
	}
	return resp
}

// record writes an audit record, filling in Mode; a failure is logged
// (and counted by the Auditor), never silent.
func (s *Server) record(e audit.Event) {
	if e.Mode == "" {
		e.Mode = string(s.live.Load().cfg.Mode)
	}
	answer.BoundClientFields(&e)
	s.vol.v.Note(&e) // refusals and opt-outs per origin, for the crawl report (volume.go)
	if err := s.audit.Record(e); err != nil {
		s.log.Error().Err(err).Str("url", e.URL).Str("decision", e.Decision).Msg("audit record not written")
	}
	s.board.Publish(e) // after the write, and never blocking (proxy/status)
}

// upstreamOutcome is the outcome of a request whose forwarding failed
// with err: a 502 (504 on a timeout) naming the origin and the error,
// audited and counted as an upstream-error decision for agent.
func upstreamOutcome(r *http.Request, agent string, err error) outcome {
	var te interface{ Timeout() bool }
	status := answer.StatusOf(answer.ReasonUpstreamError, errors.As(err, &te) && te.Timeout())
	origin, oerr := enforce.Origin(r.URL)
	name := origin
	if oerr != nil {
		name = r.URL.Host
	}
	d := enforce.Decision{Reason: answer.ReasonUpstreamError, URL: enforce.RedactedURL(r.URL), Origin: origin, Agent: agent,
		Detail: "forwarding to " + name + " failed: " + enforce.RedactURLsIn(explainUpstreamTLS(r.URL.Host, err).Error())}
	if errors.Is(err, enforce.ErrDestinationPrivate) { // the dialer's egress check (upstream/egressdial.go)
		d.Reason, status = enforce.ReasonDestinationPrivate, answer.StatusOf(enforce.ReasonDestinationPrivate, false)
		d.Detail = "not forwarded to " + name + ": " + enforce.RedactURLsIn(err.Error())
	}
	return outcome{auditAs: audit.DecisionBlocked, status: status, d: &d, err: err}
}
