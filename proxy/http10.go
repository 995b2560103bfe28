package proxy

import (
	"context"
	"net/http"
)

// closeDelimited is the placeholder Content-Length header value http10Step
// sets on a response of unknown length to an HTTP/1.0 client inside an
// MITM session. goproxy's MITM loop chunks every response whose length
// is unknown unless a Content-Length header is present; [http.Response]'s
// Write never sends that header from the map (it writes the length
// from ContentLength, here none), and ends the body by closing.
const closeDelimited = "close-delimited"

// http10Step is the last response step: it answers an HTTP/1.0 client inside
// an MITM session in HTTP/1.0 terms, which goproxy's MITM loop does not
// (it chunks bodies of unknown length and keeps every connection open).
// net/http does this itself for plain HTTP requests.
//
//   - The body is never chunked: it goes with its Content-Length when the
//     length is known, and otherwise until the connection closes.
//   - The connection stays open only when the client asked for keep-alive
//     and the length is known (the answer then says Connection:
//     keep-alive); otherwise the answer says Connection: close and the
//     session ends once it is written ([conns.Info.EndSession]).
//
// The status line stays HTTP/1.1, as goproxy writes it: RFC 9110 section
// 2.5 has a server answer with the highest minor version it supports.
//
// State: reads the via (Session); writes nothing ([requestState]).
type http10Step struct{}

func (http10Step) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	r := st.Req
	sess := st.Session
	if resp == nil || r == nil || r.ProtoAtLeast(1, 1) || sess == nil {
		return resp, outcome{}
	}
	bodyless := r.Method == http.MethodHead || resp.Body == nil || resp.Body == http.NoBody ||
		(resp.StatusCode >= 100 && resp.StatusCode <= 199) || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified
	if !bodyless && st.Body != nil && resp.Body != st.Body {
		// A hook replaced the forwarded response (a robot-tag refusal):
		// goproxy would chunk a body other than the round trip's, so the
		// new one travels inside the round trip's.
		st.Body.ReadCloser, st.Body.scan = resp.Body, nil
		resp.Body = st.Body
	}
	// No chunking for an HTTP/1.0 client: not the origin's (which
	// http.Response.Write would repeat), nor the header finish sets for
	// streaming.
	resp.TransferEncoding = nil
	resp.Header.Del("Transfer-Encoding")
	unknown := !bodyless && resp.ContentLength < 0
	if unknown {
		resp.Header.Set("Content-Length", closeDelimited)
	}
	if !r.Close && !unknown {
		resp.Close = false
		resp.Header.Set("Connection", "keep-alive")
		return resp, outcome{}
	}
	resp.Close = true
	if sess.Conn != nil {
		context.AfterFunc(r.Context(), sess.Conn.EndSession) // once the response is written
	}
	return resp, outcome{}
}
