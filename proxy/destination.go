package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// The destination step: a request inside an MITM session must name its
// CONNECT's host:port (421 misdirected), and a request to robotsgate
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
