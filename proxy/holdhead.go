package proxy

import "net/http"

// holdHeadStep is a response step, before the last (the held write
// itself: [conns.Info.HoldNext]): when the response it lets goproxy
// write inside an MITM session has a body, it has the session's
// connection hold the head back for the body's first record.
//
// State: reads the via (Session); writes nothing ([requestState]).
type holdHeadStep struct{}

func (holdHeadStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if st.Session == nil || st.Session.Conn == nil || !bodyFollows(st.Req, resp) {
		return resp, outcome{}
	}
	st.Session.Conn.HoldNext()
	return resp, outcome{}
}

// bodyFollows reports whether [http.Response.Write] of resp, the answer
// to r, writes a body of known, non-zero length after the head. A body of
// unknown length (chunked, or read to the connection's end) may be a
// stream whose first bytes come much later, so its head is not held: the
// client sees the head as soon as the origin sends it. A body that turns
// out shorter than announced leaves the held head to the session's next
// read.
func bodyFollows(r *http.Request, resp *http.Response) bool {
	switch {
	case resp == nil || r == nil || resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength <= 0:
		return false
	case r.Method == http.MethodHead || (resp.Request != nil && resp.Request.Method == http.MethodHead):
		return false
	case resp.StatusCode < 200 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		return false
	}
	return true
}
