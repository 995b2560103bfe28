package proxy

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/safetext"
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
}

// settles reports whether [Server.settle] has anything to do for o: an
// answer or an audit record. The zero outcome of most steps skips the
// call (and the copy of o it takes).
func (o *outcome) settles() bool { return o.gone != "" || o.auditAs != "" }

// refuse is the outcome of refusing the request because of d, with the
// status of d's reason ([refusalStatus]).
func refuse(d enforce.Decision) outcome {
	return outcome{auditAs: audit.DecisionBlocked, status: refusalStatus(d), d: &d}
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
// the response step that counts the others ([inflight.onResponse]).
func (s *Server) settle(r *http.Request, st *requestState, o outcome) *http.Response {
	if o.gone != "" {
		st.Answered = true
		h := make(http.Header)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		setProxyStatus(h, psInternal, strings.TrimSpace(o.gone))
		return newResponse(r, o.status, h, o.gone)
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
		resp = answer(r, o, connect)
		status = resp.StatusCode
	}
	e := eventOf(r.RemoteAddr, r.Method, *o.d, o.auditAs, status)
	e.Detail += o.auditDetail
	if st.RangeRemoved {
		e.Detail += "; Range removed from the request"
	}
	if st.Live != nil {
		e.Mode = string(st.Live.cfg.Mode)
	}
	e.AgentOverrideRefused = st.OverrideRefused
	e.PurposesOverrideRefused = st.PurposesRefused
	identify(r, st)
	e.User, e.Listener = st.Identity.User, listenerProxy
	e.SignedKeyID = s.signedKeyID(st, o) // (signstep.go)
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

// answer is robotsgate's answer to r refused by o.
func answer(r *http.Request, o outcome, connect bool) *http.Response {
	resp := refuseResponse(r, o.status, *o.d, proxyStatusError(*o.d, o.err))
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
	if err := s.audit.Record(e); err != nil {
		s.log.Error().Err(err).Str("url", e.URL).Str("decision", e.Decision).Msg("audit record not written")
	}
	s.board.Publish(e) // after the write, and never blocking (proxy/status)
}

// refuseResponse returns the response robotsgate sends instead of
// forwarding r, or instead of the response that did not arrive: status
// (403 for robots.txt refusals, 429 or 503 for politeness ones, 502 or
// 504 for upstream failures) with a body explaining d, as JSON when the
// client accepts it and as short text otherwise, the decision's headers
// and Proxy-Status with the RFC 9209 error type psError.
func refuseResponse(r *http.Request, status int, d enforce.Decision, psError string) *http.Response {
	fallback := ""
	if r.URL != nil {
		fallback = enforce.RedactedURL(r.URL)
	}
	body := newRefusalBody(status, d, fallback)
	var text, ctype string
	// Rules, URLs and agents come from origins and clients: their unsafe
	// characters are escaped, as "\u009b" in JSON (the same string once
	// decoded) and "\u009b" in text.
	if wantsJSON(r) {
		text, ctype = string(safetext.JSON([]byte(marshalJSON(body)))), "application/json"
	} else {
		text, ctype = safetext.EscapeLines(refusalText(body)), "text/plain; charset=utf-8"
	}
	h := make(http.Header, 8)
	h["Content-Type"] = []string{ctype}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	setDecisionHeaders(h, d)
	details := string(d.Reason) + ": " + body.Explanation
	if body.Detail != "" && !untrustedCert(d) { // that explanation says more, whole, than the detail's start
		details = string(d.Reason) + ": " + body.Detail
	}
	setProxyStatus(h, psError, details)
	return newResponse(r, status, h, text)
}

// marshalJSON is v as indented JSON with a final newline, without
// escaping &, < and > (the bodies are not HTML).
func marshalJSON(v any) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // plain structs: cannot fail
	return sb.String()
}

// wantsJSON reports whether the client's Accept header asks for
// application/json (or a +json type).
func wantsJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
				return true
			}
		}
	}
	return false
}

// newResponse returns robotsgate's own answer to r: status, header h
// (given Content-Length and Cache-Control: no-store here) and body text,
// which a HEAD request does not get.
func newResponse(r *http.Request, status int, h http.Header, text string) *http.Response {
	h["Content-Length"] = []string{strconv.Itoa(len(text))}
	h["Cache-Control"] = []string{"no-store"}
	resp := &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(text)),
		ContentLength: int64(len(text)),
		Request:       r,
	}
	if r.Method == http.MethodHead {
		resp.Body = http.NoBody
	}
	return resp
}

// upstreamOutcome is the outcome of a request whose forwarding failed
// with err: a 502 (504 on a timeout) naming the origin and the error,
// audited and counted as an upstream-error decision for agent.
func upstreamOutcome(r *http.Request, agent string, err error) outcome {
	var te interface{ Timeout() bool }
	status := statusOf(ReasonUpstreamError, errors.As(err, &te) && te.Timeout())
	origin, oerr := enforce.Origin(r.URL)
	name := origin
	if oerr != nil {
		name = r.URL.Host
	}
	d := enforce.Decision{Reason: ReasonUpstreamError, URL: enforce.RedactedURL(r.URL), Origin: origin, Agent: agent,
		Detail: "forwarding to " + name + " failed: " + enforce.RedactURLsIn(explainUpstreamTLS(r.URL.Host, err).Error())}
	return outcome{auditAs: audit.DecisionBlocked, status: status, d: &d, err: err}
}
