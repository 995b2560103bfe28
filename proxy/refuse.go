package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// outcome is what a step decided about a request. The zero outcome lets
// the request go on. Every refusal, and every decision that is audited
// without refusing, is an outcome that Server.settle carries out: the
// steps never build audit records or answers themselves.
type outcome struct {
	// verdict is what happens: "" nothing (go on, nothing audited);
	// audit.DecisionBlocked: robotsgate answers the request itself, with
	// status, and the origin sees nothing; audit.DecisionAllowed or
	// audit.DecisionReported: the decision is audited and the request
	// goes on.
	verdict string
	// status is the status of the refusal, or, for an audited decision
	// that lets the request go on, the origin's status when known.
	status int
	d      enforce.Decision // the decision: reason, detail, Retry-After, ...
	// note is added to the audit record's detail (not to the answer).
	note string
	// err, for a refusal, makes the answer an upstream failure saying err
	// (502, or 504 on a timeout) instead of a refusal body; the audit
	// record's detail is err's text.
	err error
	// header holds headers added to the refusal (X-Robotsgate-Index).
	header http.Header
	// close asks the client to close the connection after the refusal.
	close bool
	// gone, with status, answers a request whose client left: a short
	// text, nothing audited, the decision unchanged.
	gone string
}

// refuse is the outcome of refusing the request with status because of d.
func refuse(status int, d enforce.Decision) outcome {
	return outcome{verdict: audit.DecisionBlocked, status: status, d: d}
}

// note is the outcome of auditing d as verdict while the request goes on.
func note(verdict string, d enforce.Decision) outcome {
	return outcome{verdict: verdict, d: d}
}

// settle carries out the outcome o of a step for the request r with state
// st: it writes the audit record, marks the state and returns
// robotsgate's answer (nil when the request goes on). Decisions on a
// CONNECT are counted in the metrics here, since a CONNECT does not reach
// the response steps (observeMetrics) that count the others.
func (s *Server) settle(r *http.Request, st *requestState, o outcome) *http.Response {
	if o.gone != "" {
		st.Answered = true
		h := make(http.Header)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		return newResponse(r, o.status, h, o.gone)
	}
	if o.verdict == "" {
		return nil
	}
	connect := r.Method == http.MethodConnect
	if connect {
		s.metrics.Decision(o.d)
	}
	var resp *http.Response
	status := o.status
	if o.verdict == audit.DecisionBlocked {
		st.Decision, st.Decided, st.Answered = o.d, true, true
		resp = answer(r, o, connect)
		status = resp.StatusCode
	}
	e := eventOf(r.RemoteAddr, r.Method, o.d, o.verdict, status)
	e.Detail += o.note
	if o.err != nil {
		e.Detail = o.err.Error()
	}
	e.AgentOverrideRefused = st.OverrideRefused
	e.PurposesOverrideRefused = st.PurposesRefused
	s.record(e)
	return resp
}

// answer is robotsgate's answer to r refused by o.
func answer(r *http.Request, o outcome, connect bool) *http.Response {
	if o.err != nil {
		return upstreamError(r, o.err)
	}
	resp := refuseResponse(r, o.status, o.d)
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
		e.Mode = s.cfg.Mode
	}
	if err := s.audit.Record(e); err != nil {
		s.log.Error().Err(err).Str("url", e.URL).Str("decision", e.Decision).Msg("audit record not written")
	}
}

// refuseResponse returns the response robotsgate sends instead of
// forwarding r: status (403 for robots.txt refusals, 429 or 503 for
// politeness ones) with a body explaining d, as JSON when the client
// accepts it and as short text otherwise, and the decision's headers.
func refuseResponse(r *http.Request, status int, d enforce.Decision) *http.Response {
	fallback := ""
	if r.URL != nil {
		fallback = enforce.RedactedURL(r.URL)
	}
	body := newRefusalBody(status, d, fallback)
	var text, ctype string
	if wantsJSON(r) {
		b, _ := json.MarshalIndent(body, "", "  ") // plain struct: cannot fail
		text, ctype = string(b)+"\n", "application/json"
	} else {
		text, ctype = refusalText(body), "text/plain; charset=utf-8"
	}
	h := make(http.Header)
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	setDecisionHeaders(h, d)
	return newResponse(r, status, h, text)
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
	h.Set("Content-Length", strconv.Itoa(len(text)))
	h.Set("Cache-Control", "no-store")
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
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

// upstreamError is the response sent when forwarding failed (connection
// refused, timeout, ...): 502, or 504 for a timeout. URLs quoted in err
// lose their userinfo.
func upstreamError(r *http.Request, err error) *http.Response {
	status := http.StatusBadGateway
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		status = http.StatusGatewayTimeout
	}
	text := fmt.Sprintf("robotsgate: %d %s: %s\n", status, http.StatusText(status), enforce.RedactURLsIn(err.Error()))
	h := make(http.Header)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	return newResponse(r, status, h, text)
}
