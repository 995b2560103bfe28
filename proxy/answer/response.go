// Package answer builds robotsgate's own answers and what they say: the
// refusal a step's outcome turns into (status, body as JSON or text,
// X-Robotsgate-* headers, Proxy-Status), the table of reasons, a
// decision as an audit record and as the admin API shows it, and the
// safe text all of them carry. It decides nothing and imports no proxy
// step: package proxy calls it.
//
// This file: the refusal response and robotsgate's own answers.
package answer

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/safetext"
)

// Refusal returns the response robotsgate sends instead of
// forwarding r, or instead of the response that did not arrive: status
// (403 for robots.txt refusals, 429 or 503 for politeness ones, 502 or
// 504 for upstream failures) with a body explaining d, as JSON when the
// client accepts it and as short text otherwise, the decision's headers
// and Proxy-Status with the RFC 9209 error type psError.
func Refusal(r *http.Request, status int, d enforce.Decision, psError string) *http.Response {
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

// New returns robotsgate's own answer to r: status, header h
// (given Content-Length and Cache-Control: no-store here) and body text,
// which a HEAD request does not get.
func New(r *http.Request, status int, h http.Header, text string) *http.Response {
	return newResponseOf(r, status, newHeaderSetter(h, 2), text)
}

// newResponseOf is [New] with the header's values set by hs.
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
