package proxy

import (
	"net/http"

	"golang.org/x/net/http/httpguts"

	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// Hop-by-hop headers: the step that removes them from requests and
// responses, as net/http/httputil.ReverseProxy does.

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
	ws := upstream.IsWebSocketUpgrade(h)
	var upgrade string
	if ws {
		upgrade = h.Get("Upgrade")
	}
	trailers := httpguts.HeaderValuesContainsToken(h["Te"], "trailers")
	upstream.RemoveHopByHop(h)
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
	if resp.StatusCode == http.StatusSwitchingProtocols && upstream.IsWebSocketUpgrade(h) {
		upgrade := h.Get("Upgrade")
		upstream.RemoveHopByHop(h)
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", upgrade)
		return resp, outcome{}
	}
	upstream.RemoveHopByHop(h)
	return resp, outcome{}
}
