package proxy

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// canonicalStep is the first deciding step: it rewrites the destination
// of a request (its URL's host and port, and its Host header) to the one
// spelling enforce keys every per-origin state on ([enforce.Authority]),
// so that what robotsgate decides, paces and pauses is exactly what the
// transport dials: "[::ffff:7f00:1]:80", "[::FFFF:127.0.0.1]:080" and
// "127.0.0.1" are all sent to 127.0.0.1, and "ｌocalhost" to localhost.
// A host that has no canonical spelling (invalid IDNA, characters no host
// name holds, empty labels, an IPv4 shorthand) is refused with 400
// invalid-host and never fetched. Other URLs (no host, a bad port, a
// scheme that is not http or https) are left to the later steps.
//
// State: reads the caller (Agent, for its refusal); writes nothing
// ([requestState]).
type canonicalStep struct{}

func (canonicalStep) onRequest(r *http.Request, st *requestState) outcome {
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return outcome{}
	}
	auth, err := enforce.Authority(r.URL)
	if errors.Is(err, enforce.ErrInvalidHost) {
		return invalidHost(enforce.RedactedURL(r.URL), st, err)
	}
	if err != nil {
		return outcome{} // no host or a bad port: the robots step refuses it (invalid-url)
	}
	r.URL.Host = auth
	if r.Host == "" {
		return outcome{}
	}
	h, err := enforce.Authority(&url.URL{Scheme: r.URL.Scheme, Host: r.Host})
	if errors.Is(err, enforce.ErrInvalidHost) {
		return invalidHost(enforce.RedactedURL(r.URL), st, err)
	}
	if err == nil {
		r.Host = h
	}
	return outcome{}
}

// invalidHost is the 400 refusal of a request for rawURL whose host err
// says has no canonical spelling.
func invalidHost(rawURL string, st *requestState, err error) outcome {
	d := enforce.Decision{Reason: enforce.ReasonInvalidHost, URL: rawURL, Agent: st.Agent,
		Detail: enforce.RedactURLsIn(err.Error()) + ": the request is not forwarded"}
	return refuse(d)
}

// canonicalConnect returns the canonical host:port of a CONNECT to
// hostname (as sent, brackets included or not) and port, as the dialer
// takes it ("[::1]:443", "127.0.0.1:443", "xn--bcher-kva.de:443"), or the
// invalid-host refusal.
func canonicalConnect(hostname string, port uint16, st *requestState) (string, outcome, bool) {
	if strings.IndexByte(hostname, ':') >= 0 && !strings.HasPrefix(hostname, "[") {
		hostname = "[" + hostname + "]"
	}
	h, err := enforce.CanonicalHost(hostname)
	if err != nil {
		target := hostname + ":" + strconv.Itoa(int(port))
		return "", invalidHost(target, st, err), false
	}
	return selfaddr.JoinHostPort(strings.Trim(h, "[]"), port), outcome{}, true
}
