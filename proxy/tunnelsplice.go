package proxy

import (
	"fmt"
	"net"
	"net/http"

	"github.com/elazarl/goproxy"
	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/upstream"
)

// tunnelAction is the ConnectAction of a tunnel-mode CONNECT that was
// decided open at host level for st: spliceTunnel to target, the
// host:port as enforce keys it (canonical.go).
func (s *Server) tunnelAction(st *requestState, target string) *goproxy.ConnectAction {
	return &goproxy.ConnectAction{Action: goproxy.ConnectHijack,
		Hijack: func(r *http.Request, client net.Conn, ctx *goproxy.ProxyCtx) {
			s.spliceTunnel(r, client, ctx, st, target)
		}}
}

// spliceTunnel carries out an open tunnel-mode CONNECT on the hijacked
// client connection: it dials the target as goproxy's own tunnel would
// (the pinned, self-refusing dialer; the original destination of a
// redirected connection), answers 200, and splices the two connections
// only when the client's first bytes begin a TLS ClientHello. Anything
// else (plain HTTP sent inside the tunnel, which tunnel mode cannot
// decide per path) is refused through [Server.settle] and the connection
// closed: the origin sees none of it. The client connection is tracked
// (conns/conntrack.go), which bounds the wait for the first bytes by
// client.header_timeout and lets Shutdown close the tunnel.
func (s *Server) spliceTunnel(r *http.Request, client net.Conn, ctx *goproxy.ProxyCtx, st *requestState, addr string) {
	up, err := s.dialTunnel(ctx, addr)
	if err != nil {
		s.log.Warn().Err(err).Str("target", addr).Msg("tunnel: dialing the CONNECT target failed")
		msg := err.Error()
		_, _ = fmt.Fprintf(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
		_ = client.Close()
		return
	}
	major, minor := r.ProtoMajor, r.ProtoMinor
	if major == 0 {
		major, minor = 1, 1
	}
	if _, err := fmt.Fprintf(client, "HTTP/%d.%d 200 Connection established\r\n\r\n", major, minor); err != nil {
		_ = client.Close()
		_ = up.Close()
		return
	}
	go upstream.CheckAndSplice(client, up, addr, s.cfg.Client.HeaderTimeout, s.cfg.Client.IdleTimeout, func(hc upstream.HelloCheck) {
		s.refuseTunnel(r, st, client, hc, addr)
	})
}

// refuseTunnel audits the refusal hc of the tunnel st opened, whose
// client sent first what may not go through, and answers it: with a TLS
// alert when it began a TLS handshake, and otherwise with the refusal, which a
// client that sent a plain HTTP request reads as the answer to it.
func (s *Server) refuseTunnel(r *http.Request, st *requestState, client net.Conn, hc upstream.HelloCheck, addr string) {
	d := st.Decision
	d.Allowed, d.Reason, d.Agent = false, tunnelReason(hc.Refused), st.Agent
	if d.URL == "" {
		d.URL = "https://" + addr
	}
	d.Detail = "tunnel mode: " + hc.Detail
	if !hc.TLS {
		d.Detail = fmt.Sprintf("tunnel mode: the first bytes inside the CONNECT tunnel (%q) %s; "+
			"tunnel mode decides hosts only and cannot check the paths of plain HTTP inside a tunnel, so the tunnel was closed "+
			"(send http:// URLs to the proxy as proxy requests, or use https.mode mitm)", quoteHead(hc.First), hc.Detail)
	}
	resp := s.settle(r, st, refuse(d))
	switch {
	case resp == nil:
	case hc.TLS:
		_ = resp.Body.Close()
		upstream.SendAccessDenied(client)
	default:
		_ = resp.Write(client)
		_ = resp.Body.Close()
	}
	upstream.LingerClose(client, s.cfg.Client.HeaderTimeout)
}

// tunnelReason returns the reason of a refusal of a tunnel's first bytes.
func tunnelReason(r upstream.HelloRefusal) enforce.Reason {
	switch r {
	case upstream.HelloServerName:
		return answer.ReasonTunnelServerName
	case upstream.HelloECH:
		return answer.ReasonTunnelECH
	}
	return answer.ReasonTunnelNotTLS
}

// quoteHead is the start of first, the bytes a refused tunnel began
// with, as the audit quotes them.
func quoteHead(first []byte) []byte {
	const max = 64
	if len(first) > max {
		return first[:max]
	}
	return first
}

// dialTunnel dials addr for the tunnel of the CONNECT ctx.Req as
// goproxy's own tunnel does: through the upstream proxy when one is
// configured, and otherwise with the transport's dialer, which dials
// exactly the addresses the CONNECT was checked against ([selfaddr.WithPin]
// in the request's context) and refuses robotsgate itself.
func (s *Server) dialTunnel(ctx *goproxy.ProxyCtx, addr string) (net.Conn, error) {
	p := s.proxy
	switch {
	case ctx.Dialer != nil:
		return ctx.Dialer(ctx.Req.Context(), "tcp", addr)
	case p.ConnectDialWithReq != nil:
		return p.ConnectDialWithReq(ctx.Req, "tcp", addr)
	case p.ConnectDial != nil:
		return p.ConnectDial("tcp", addr)
	case p.Tr != nil && p.Tr.DialContext != nil:
		return p.Tr.DialContext(ctx.Req.Context(), "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx.Req.Context(), "tcp", addr)
}
