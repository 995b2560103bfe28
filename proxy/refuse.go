package proxy

import (
	"encoding/json"
	"errors"
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
	// pay is the payment record of the audit record (payment.go).
	pay *audit.Payment
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
	boundClientFields(&e) // (clientbounds.go)
	s.vol.v.Note(&e)      // refusals and opt-outs per origin, for the crawl report (volumestep.go)
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
	if d.URL == "" && r.URL != nil { // shown only when d has no URL
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
	hs := newHeaderSetter(make(http.Header, 8), 10)
	hs.set("Content-Type", ctype)
	hs.set("X-Content-Type-Options", "nosniff")
	setDecisionHeaders(hs, d)
	details := string(d.Reason) + ": " + body.Explanation
	if body.Detail != "" && !untrustedCert(d) { // that explanation says more, whole, than the detail's start
		details = string(d.Reason) + ": " + body.Detail
	}
	hs.set(HeaderProxyStatus, proxyStatusValue(psError, details))
	return newResponseOf(r, status, hs, text)
}

// headerSetter sets the headers of one of robotsgate's answers, each
// value a slice of length and capacity one cut from one backing array,
// so that an answer's headers cost one allocation rather than one each
// (an Add to such a value copies it, as to any other). Keys are given
// canonical.
type headerSetter struct {
	h    http.Header
	vals []string
}

// newHeaderSetter returns a setter of h's values with room for n of them
// in its first array.
func newHeaderSetter(h http.Header, n int) *headerSetter {
	return &headerSetter{h: h, vals: make([]string, 0, n)}
}

// set sets key's value to v alone.
func (hs *headerSetter) set(key, v string) {
	hs.vals = append(hs.vals, v)
	n := len(hs.vals)
	hs.h[key] = hs.vals[n-1 : n : n]
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
	return newResponseOf(r, status, newHeaderSetter(h, 2), text)
}

// newResponseOf is [newResponse] with the header's values set by hs.
func newResponseOf(r *http.Request, status int, hs *headerSetter, text string) *http.Response {
	hs.set("Content-Length", strconv.Itoa(len(text)))
	hs.set("Cache-Control", "no-store")
	a := &ownAnswer{resp: http.Response{
		Status:        statusLine(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hs.h,
		ContentLength: int64(len(text)),
		Request:       r,
	}}
	a.body.Reset(text)
	a.resp.Body = &a.body
	if r.Method == http.MethodHead {
		a.resp.Body = http.NoBody
	}
	return &a.resp
}

// ownAnswer is one of robotsgate's answers and its body, allocated
// together.
type ownAnswer struct {
	resp http.Response
	body textBody
}

// textBody is the body of an answer: a string, closed for nothing.
type textBody struct{ strings.Reader }

func (*textBody) Close() error { return nil }

// statusLine is status's code and text as a response's Status says them,
// without building the string for the statuses robotsgate answers with.
func statusLine(status int) string {
	switch status {
	case http.StatusForbidden:
		return "403 Forbidden"
	case http.StatusTooManyRequests:
		return "429 Too Many Requests"
	case http.StatusBadGateway:
		return "502 Bad Gateway"
	case http.StatusServiceUnavailable:
		return "503 Service Unavailable"
	case http.StatusGatewayTimeout:
		return "504 Gateway Timeout"
	}
	return strconv.Itoa(status) + " " + http.StatusText(status)
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
	if errors.Is(err, enforce.ErrDestinationPrivate) { // the dialer's egress check (egressdial.go)
		d.Reason, status = enforce.ReasonDestinationPrivate, statusOf(enforce.ReasonDestinationPrivate, false)
		d.Detail = "not forwarded to " + name + ": " + enforce.RedactURLsIn(err.Error())
	}
	return outcome{auditAs: audit.DecisionBlocked, status: status, d: &d, err: err}
}
