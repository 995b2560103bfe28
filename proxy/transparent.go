package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
	"github.com/robotsgate/robotsgate/proxy/transparent"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// The transparent listener: connections the kernel redirected to
// robotsgate (iptables REDIRECT, see `robotsgate iptables`) from clients
// that know nothing of a proxy. Each connection's original destination is
// read and its first bytes sniffed (package transparent); then:
//   - HTTP/1.x: its requests are served by an http.Server whose handler
//     makes each URL absolute from its Host and hands it to the proxy
//     handler, so that it takes the request pipeline like a proxied one;
//     the destination step (checkRedirected) refuses a Host that is not
//     the original destination and pins the dial to it;
//   - TLS: served as if the client had sent "CONNECT <SNI>:<port>" (MITM
//     or tunnel as https.mode says), after checking that the server name
//     is the original destination;
//   - anything else, no server name, no redirect, a redirect loop: the
//     connection is audited and closed (an HTTP client gets its answer).
//
// Every decision and refusal goes through the pipeline and Server.settle.

// sniffTimeout bounds the wait for a redirected connection's first bytes.
const sniffTimeout = 10 * time.Second

// redirected is what the pipeline knows of a redirected connection.
type redirected struct {
	dst netip.AddrPort // the original destination
	// refusal, when set, answers every request on the connection (no
	// redirect, a loop, robotsgate itself as destination).
	refusal *outcome
	// vhost and vport are the last host and port found to be dst, and
	// pin the dialer's pin of them; a connection's requests are handled
	// one at a time.
	vhost string
	vport uint16
	pin   *selfaddr.Pin
}

// redirectedKey is the context key of the *redirected a request arrived
// on; [newRequestState] makes it the request's [requestState.Redirected].
type redirectedKey struct{}

// redirectedConn is an HTTP connection pushed to the transparent
// [http.Server], with what the pipeline must know of it.
type redirectedConn struct {
	*transparent.Conn
	rd *redirected
}

// ServeTransparent serves the transparent listener ln until Shutdown (it
// then returns nil). Its connections must have been redirected to it.
func (s *Server) ServeTransparent(ln net.Listener) error {
	q := transparent.NewQueue(ln)
	// The proxy listener's client limits (Server.clientServer), its body bound
	// (the handler chain of Server.installAround) and its running-handler count.
	srv := s.clientServer(s.life.Wrap(conns.LimitsOf(s.cfg.Client).BoundBody(http.HandlerFunc(s.serveRedirected))))
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if rc, ok := c.(*redirectedConn); ok {
			return context.WithValue(ctx, redirectedKey{}, rc.rd)
		}
		return ctx
	}
	if !s.register(ln, srv) {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(q) }()
	transparent.Serve(ln, func(c net.Conn) { s.acceptRedirected(c, q) })
	q.Close() // ln closed without Shutdown: the server stops too, with an error
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy: serve transparent %s: %w", ln.Addr(), err)
	}
	return nil
}

// acceptRedirected classifies one redirected connection and hands it on.
// It counts as a running handler until then, and Shutdown ends its wait
// for the first bytes.
func (s *Server) acceptRedirected(c net.Conn, q *transparent.Queue) {
	s.life.Enter()
	defer s.life.Leave()
	stop := context.AfterFunc(s.life.Waits(), func() { c.Close() })
	dst, derr := s.originalDst(c)
	tc, err := transparent.Sniff(c, dst, sniffTimeout)
	stop()
	if err != nil {
		tc = &transparent.Conn{Conn: c, Dst: dst, Why: err.Error()}
	}
	rd := &redirected{dst: netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())}
	rd.refusal = s.connRefusal(c, rd.dst, derr) // for a connection without one, rd.dst is never dialled
	switch {
	case tc.Kind == transparent.KindHTTP:
		if !q.Push(&redirectedConn{Conn: tc, rd: rd}) {
			c.Close()
		}
		return
	case rd.refusal != nil:
	case tc.Kind == transparent.KindTLS && tc.SNI == "":
		rd.refusal = refusalOf(answer.ReasonNoSNI, rd.dst,
			"a TLS connection to "+rd.dst.String()+" without a server name (SNI): robotsgate cannot tell which site it is for, so it is not spliced")
	case tc.Kind == transparent.KindTLS:
		s.serveRedirectedTLS(tc, rd)
		return
	default:
		rd.refusal = refusalOf(answer.ReasonUnknownProtocol, rd.dst,
			"a connection to "+rd.dst.String()+" that is neither HTTP/1.x nor TLS was closed: "+tc.Why)
	}
	method := ""
	if tc.Kind == transparent.KindTLS {
		method = http.MethodConnect
	}
	s.closeRefused(c, method, rd, rd.refusal)
}

// connRefusal is the refusal of every request on the connection c to
// dst, whose original destination could not be read when derr is not
// nil: c was not redirected, is robotsgate's own outbound connection
// come back (a loop), is addressed to robotsgate itself, or to an
// address the egress policy forbids. It is nil for
// a connection that may go on.
func (s *Server) connRefusal(c net.Conn, dst netip.AddrPort, derr error) *outcome {
	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	remote, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	switch {
	case s.outbound != nil && s.outbound.Has(remote, dst):
		uid := strconv.Itoa(os.Getuid())
		s.log.Error().Str("destination", dst.String()).Int("uid", os.Getuid()).
			Msg("redirect loop: robotsgate's own outbound connection was redirected back to its transparent listener; exclude uid " + uid + " from the redirect (robotsgate iptables -uid " + uid + ")")
		return refusalOf(answer.ReasonRedirectLoop, dst,
			"robotsgate's own connection to "+dst.String()+" was redirected back to it: the redirect rules must exclude uid "+uid+" (robotsgate iptables -uid "+uid+")")
	case derr != nil || dst == local:
		why := "its original destination is the listener itself"
		if derr != nil {
			why = derr.Error()
		}
		return refusalOf(answer.ReasonNotRedirected, local,
			"a connection to the transparent listener that was not redirected ("+why+"): send proxy requests to the proxy listener")
	}
	if _, self := s.self.Check(context.Background(), dst.Addr().String(), dst.Port()); self {
		return refusalOf(answer.ReasonSelfRequest, dst,
			"the original destination "+dst.String()+" is robotsgate itself; its admin API is not reachable through the proxy")
	}
	if why := upstream.EgressRefusal(s.egressPolicy(), dst.Addr(), false); why != "" { // (upstream/egressdial.go)
		return refusalOf(enforce.ReasonDestinationPrivate, dst, "the original destination "+dst.String()+" is "+why+
			": robotsgate does not connect to it (egress.private, egress.allow_cidrs, egress.deny_cidrs)")
	}
	return nil
}

// refusalOf is the refusal with reason of a request on a redirected
// connection to dst.
func refusalOf(reason enforce.Reason, dst netip.AddrPort, detail string) *outcome {
	o := refuse(enforce.Decision{Reason: reason, URL: "tcp://" + dst.String(), Detail: detail})
	o.close = true
	return &o
}

// closeRefused audits and counts the refusal o of the connection c,
// redirected as rd, and closes c without an answer: its client speaks no
// HTTP.
func (s *Server) closeRefused(c net.Conn, method string, rd *redirected, o *outcome) {
	r := &http.Request{Method: method, URL: &url.URL{Scheme: "tcp", Host: strings.TrimPrefix(o.d.URL, "tcp://")},
		Header: make(http.Header), RemoteAddr: c.RemoteAddr().String(), Host: o.d.URL}
	if method != http.MethodConnect { // settle counts the decisions of CONNECTs only
		s.metrics.Decision(*o.d)
	}
	st := newRequestState(r, nil, nil)
	st.Redirected = rd
	if resp := s.settle(r, st, *o); resp != nil {
		resp.Body.Close()
	}
	c.Close()
}

// serveRedirected is the handler of the transparent [http.Server]: it makes
// the request's URL absolute from its Host (or the original destination
// when it has none) and hands it to the proxy's handler.
func (s *Server) serveRedirected(w http.ResponseWriter, r *http.Request) {
	rd, _ := r.Context().Value(redirectedKey{}).(*redirected)
	if rd == nil { // not from the queue: cannot happen
		http.Error(w, "not a redirected connection", http.StatusInternalServerError)
		return
	}
	if r.Method == http.MethodConnect {
		d := enforce.Decision{Reason: answer.ReasonDestinationMismatch, URL: "tcp://" + rd.dst.String(),
			Detail: "a CONNECT on a connection already addressed to " + rd.dst.String() + " (clients behind the transparent listener send plain requests)"}
		transparent.WriteResponse(w, s.settle(r, newRequestState(r, nil, nil), refuse(d)))
		return
	}
	if r.Host == "" { // HTTP/1.0 without Host: the address is the name
		r.Host = selfaddr.JoinHostPort(rd.dst.Addr().String(), rd.dst.Port())
	}
	r.URL.Scheme, r.URL.Host = "http", r.Host
	s.proxy.ServeHTTP(w, r)
}

// checkRedirected is the destination check of a request on a redirected
// connection: the connection's own refusal if it has one; 409 when the
// request's host:port is not the original destination (the name does
// not resolve to its address, or is not that address); otherwise the
// request is pinned to the original destination, whatever the name
// resolves to when it is dialled.
func checkRedirected(self *selfaddr.Set, r *http.Request, st *requestState, rd *redirected, host string, port uint16, portOK bool) outcome {
	if rd.refusal != nil {
		o := *rd.refusal
		d := *o.d // rd.refusal is the connection's: its decision is not changed
		d.URL = enforce.RedactedURL(r.URL)
		o.d = &d
		return o
	}
	if !portOK || host != rd.vhost || port != rd.vport {
		target := selfaddr.JoinHostPort(host, port)
		if !portOK || port != rd.dst.Port() || !self.Resolves(r.Context(), host, rd.dst.Addr()) {
			d := enforce.Decision{Reason: answer.ReasonDestinationMismatch, URL: enforce.RedactedURL(r.URL),
				Detail: "the request names " + strconv.Quote(target) + " but its connection was addressed to " + rd.dst.String() +
					", which that name does not resolve to"}
			if o, err := enforce.Origin(r.URL); err == nil {
				d.Origin = o
			}
			return refuse(d)
		}
		rd.vhost, rd.vport, rd.pin = host, port, selfaddr.PinTo(host, port, rd.dst.Addr())
	}
	st.Req = r.WithContext(upstream.WithPin(r.Context(), rd.pin)) // its policy files are the destination's (upstream/pins.go)
	return outcome{}
}

// serveRedirectedTLS serves a redirected TLS connection as a CONNECT to
// its server name and original port, once the name is found to be the
// original destination (otherwise the connection is refused and closed).
// The CONNECT's answer is not written: the client never sent one.
func (s *Server) serveRedirectedTLS(tc *transparent.Conn, rd *redirected) {
	// The name as the CONNECT path decides and dials it (destination.go),
	// so that the pin below is the one its dial looks for.
	host, err := enforce.CanonicalHost(tc.SNI)
	if err != nil {
		o := refusalOf(enforce.ReasonInvalidHost, rd.dst,
			"the TLS server name "+strconv.Quote(tc.SNI)+" is not a host name robotsgate can decide for: "+err.Error())
		s.closeRefused(tc, http.MethodConnect, rd, o)
		return
	}
	target := selfaddr.JoinHostPort(host, rd.dst.Port())
	if !s.self.Resolves(context.Background(), host, rd.dst.Addr()) {
		o := refusalOf(answer.ReasonDestinationMismatch, rd.dst,
			"the TLS server name "+strconv.Quote(tc.SNI)+" does not resolve to "+rd.dst.Addr().String()+", where the connection was addressed")
		o.d.URL = "https://" + target
		s.closeRefused(tc, http.MethodConnect, rd, o)
		return
	}
	rd.vhost, rd.vport, rd.pin = host, rd.dst.Port(), selfaddr.PinTo(host, rd.dst.Port(), rd.dst.Addr())
	ctx := context.WithValue(context.Background(), redirectedKey{}, rd)
	ctx = upstream.WithPin(ctx, rd.pin) // a tunnel dials the original destination, decided by its robots.txt
	r := (&http.Request{Method: http.MethodConnect, URL: &url.URL{Host: target}, Host: target, RequestURI: target,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: make(http.Header),
		RemoteAddr: tc.RemoteAddr().String()}).WithContext(ctx)
	tc.DiscardUntilRead()
	s.life.Wrap(s.https.hijacks.Wrap(s.proxy)).ServeHTTP(transparent.HijackWriter(tc), r)
}
