package proxy

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// Where a request goes: its host and port in their one spelling
// (canonicalStep, below), and the destination step: a request inside an
// MITM session must name its CONNECT's host:port (421 misdirected), and a request to robotsgate
// itself is refused (403 self-request). The dialer's own check of the
// addresses it connects to is [Server.installTransports].

// destinationStep is the step that refuses, whatever the mode:
//   - with 421 Misdirected Request, a request inside an MITM session whose
//     host:port is not the one its CONNECT named (goproxy builds the URL
//     from the inner Host header, which would bypass https.allowed_ports
//     and apply robots.txt and pacing to another origin than the
//     certificate's);
//   - with 403, a request whose destination is robotsgate itself (its
//     proxy or admin listener): the admin API must not be reachable
//     through the proxy.
//
// Both are audited as blocked. A request that goes on is pinned to the
// address it will be sent to (upstream/pins.go; on the transparent listener, its
// original destination), whose policy files decide it.
//
// State: reads the via (Session, Redirected) and Live; writes nothing
// ([requestState]).
type destinationStep struct {
	self *selfaddr.Set
	pins *upstream.AddrPins // nil with an upstream proxy, which resolves names itself
}

// egressOf returns the egress policy a request of st is decided under.
func egressOf(st *requestState) *egress.Policy {
	if st.Live == nil {
		return nil
	}
	return st.Live.egress
}

func (dst destinationStep) onRequest(r *http.Request, st *requestState) outcome {
	host, port, portOK := selfaddr.DestHostPort(r.URL.Host, r.URL.Scheme)
	if sess := st.Session; sess != nil {
		hh, hp, hok := host, port, true
		if r.Host != "" {
			hh, hp, hok = selfaddr.DestHostPort(r.Host, r.URL.Scheme)
		}
		if !portOK || !hok || !isHostPort(sess.Target, host, port) || !isHostPort(sess.Target, hh, hp) {
			hdr := selfaddr.JoinHostPort(hh, hp)
			d := enforce.Decision{Reason: answer.ReasonMisdirected, URL: enforce.RedactedURL(r.URL), Agent: sess.Agent,
				Detail: "the request names " + strconv.Quote(hdr) + " inside a CONNECT to " + strconv.Quote(sess.Target) +
					": send requests for another host through their own CONNECT"}
			return refuse(d)
		}
	}
	if rd := st.Redirected; rd != nil { // a redirected connection (transparent.go), its destination checked (connRefusal)
		o := checkRedirected(dst.self, r, st, rd, host, port, portOK)
		if o.d == nil && egressOf(st) != nil && egressOf(st).Check(rd.dst.Addr()).Public {
			st.Req = st.Req.WithContext(upstream.WithPublicOrigin(st.Req.Context()))
		}
		return o
	}
	if !portOK {
		return outcome{} // not dialable: the dialer refuses it (selfaddr.Set.Dialer), enforce calls it an invalid URL
	}
	pin, self := dst.pin(r, host, port)
	if self {
		d := enforce.Decision{Reason: answer.ReasonSelfRequest, URL: enforce.RedactedURL(r.URL),
			Detail: "the destination " + selfaddr.JoinHostPort(host, port) + " is robotsgate itself; its admin API is not reachable through the proxy"}
		if o, err := enforce.Origin(r.URL); err == nil {
			d.Origin = o
		}
		return refuse(d)
	}
	ip := pin.Addr()
	if !ip.IsValid() {
		ip = upstream.LiteralIP(host) // not pinned: an IP literal, or a name an upstream proxy resolves
	}
	rctx, refused := checkDestination(r.Context(), egressOf(st), r.URL, host, ip) // 403 destination-private (egressdial.go, upstream/egressdial.go)
	if refused != nil {
		return *refused
	}
	if pin != nil { // dial exactly the addresses just checked
		rctx = upstream.WithPin(rctx, pin)
	}
	if rctx != r.Context() {
		st.Req = r.WithContext(rctx)
	}
	return outcome{}
}

// pin returns the pin of a request r to host:port ([upstream.AddrPins.Pin]), or, with an
// upstream proxy, the addresses checked when the port is one robotsgate
// listens on; self reports that the destination is robotsgate itself.
func (dst destinationStep) pin(r *http.Request, host string, port uint16) (*selfaddr.Pin, bool) {
	if dst.pins == nil {
		return dst.self.Check(r.Context(), host, port)
	}
	return dst.pins.Pin(r.Context(), host, port)
}

// isHostPort reports whether s is [selfaddr.JoinHostPort] of host and
// port, without building that string.
func isHostPort(s, host string, port uint16) bool {
	if strings.IndexByte(host, ':') >= 0 { // an IPv6 address, bracketed, then the port
		if len(s) < len(host)+2 || s[0] != '[' || s[1:1+len(host)] != host || s[1+len(host)] != ']' {
			return false
		}
		s = s[len(host)+2:]
	} else {
		if !strings.HasPrefix(s, host) {
			return false
		}
		s = s[len(host):]
	}
	var digits [5]byte
	return len(s) > 1 && s[0] == ':' && s[1:] == string(strconv.AppendUint(digits[:0], uint64(port), 10))
}

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
