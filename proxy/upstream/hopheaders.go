package upstream

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Hop-by-hop headers: which headers a proxy must not forward, removed
// from a header as net/http/httputil.ReverseProxy removes them.

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

// RemoveHopByHop deletes from h the headers that its Connection header
// names and the [hopHeaders], as [httputil.ReverseProxy] does.
func RemoveHopByHop(h http.Header) {
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

// IsWebSocketUpgrade reports whether h asks for (or, on a 101, accepts)
// a WebSocket upgrade: the one upgrade goproxy relays.
func IsWebSocketUpgrade(h http.Header) bool {
	return httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") &&
		httpguts.HeaderValuesContainsToken(h["Upgrade"], "websocket")
}
