package proxy

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Hop-by-hop headers: the step that removes them from requests and
// responses, as net/http/httputil.ReverseProxy does.

// hopHeaders are the hop-by-hop headers, as canonical keys (RFC 9110 section 7.6.1, and
// RFC 2616 section 13.5.1 for compatibility) that a proxy must not
// forward, as net/http/httputil.ReverseProxy removes them. goproxy's
// own removal of proxy headers drops only Connection and the Proxy-* ones.
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection", // non-standard, sent by libcurl
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Trailers", // a frequent misspelling, hop-by-hop wherever it is used
	"Transfer-Encoding",
	"Upgrade",
}

// removeHopByHop deletes from h the headers that its Connection header
// names and the [hopHeaders], as [httputil.ReverseProxy] does.
func removeHopByHop(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, f := range hopHeaders {
		delete(h, f) // hopHeaders are canonical keys
	}
}

// dropTrailer removes the trailer section of a request about to be
// sent, the one copy of it the transport reads: net/http's server fills
// req.Trailer (the fields a Trailer header declares, and every other
// field of the section with them) as the body ends, and the transport
// writes the fields of the map it was given after the body and declares
// them in a Trailer header of its own. A client's trailer could carry
// what the header's stripping removes (Proxy-Authorization, fields its
// Connection names, X-Robots-* overrides, a second Host), and no request
// robotsgate forwards needs one, so the section is dropped whole rather
// than filtered field by field. The map is replaced, not emptied: the
// server still writes the client's fields into it while the body is read.
func dropTrailer(req *http.Request) {
	req.Trailer = nil
}

// isWebSocketUpgrade reports whether h asks for (or, on a 101, accepts)
// a WebSocket upgrade: the one upgrade goproxy relays.
func isWebSocketUpgrade(h http.Header) bool {
	return httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") &&
		httpguts.HeaderValuesContainsToken(h["Upgrade"], "websocket")
}

// hopHeadersStep is the step that removes hop-by-hop headers, from the request
// and from the response.
//
// State: reads and writes nothing ([requestState]).
type hopHeadersStep struct{}

// onRequest removes hop-by-hop headers before the request is decided and
// forwarded. Like [httputil.ReverseProxy] it keeps "TE: trailers" and a
// WebSocket upgrade (Connection: Upgrade, Upgrade: websocket), which
// goproxy relays; other upgrades (h2c, ...) are dropped, so the origin answers
// plain HTTP/1.1.
func (hopHeadersStep) onRequest(r *http.Request, _ *requestState) outcome {
	h := r.Header
	ws := isWebSocketUpgrade(h)
	var upgrade string
	if ws {
		upgrade = h.Get("Upgrade")
	}
	trailers := httpguts.HeaderValuesContainsToken(h["Te"], "trailers")
	removeHopByHop(h)
	if ws {
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
	}
	if trailers {
		h.Set("Te", "trailers")
	}
	return outcome{}
}

// onResponse removes the origin's
// hop-by-hop headers (Connection, Keep-Alive, Proxy-Authenticate, the
// headers Connection names, ...) before goproxy copies the header to the
// client; a 101 WebSocket handshake keeps Connection and Upgrade, which
// goproxy needs to relay it. Transfer-Encoding is set again later (finish)
// when the body is streamed.
func (hopHeadersStep) onResponse(resp *http.Response, _ *requestState) (*http.Response, outcome) {
	if resp == nil {
		return nil, outcome{}
	}
	h := resp.Header
	if resp.StatusCode == http.StatusSwitchingProtocols && isWebSocketUpgrade(h) {
		upgrade := h.Get("Upgrade")
		removeHopByHop(h)
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
		return resp, outcome{}
	}
	removeHopByHop(h)
	return resp, outcome{}
}
