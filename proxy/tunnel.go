package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/upstream"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// Tunnel mode: a CONNECT decided open at host level is spliced (only a
// TLS ClientHello for the target; anything else refused), after the
// host-level TDMRep and license decisions (tunnelPolicies).

// tunnelAction is the ConnectAction of a tunnel-mode CONNECT that was
// decided open at host level for st: spliceTunnel to target, the
// host:port as enforce keys it (destination.go).
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

// Tunnel mode's host-level decisions by TDMRep and RSL licenses, made as
// robots.txt's is ([Server.hostDecision]): tunnel mode sees only the
// host, so a CONNECT is refused when tdmrep.json reserves, or a license
// prohibits (or needs a token for) the declared purposes on, every URL of
// the site, by a rule or a <content> whose pattern matches every path;
// the refusal is the one mitm mode makes of each request to the site
// (tdm-reserved, tdm-unknown, license-prohibited, license-required,
// license-unknown), with the same audit record and answer. Where only
// some paths are covered the tunnel opens (tunnel-unenforced), and a
// warning at start and at each reload says what tunnel mode cannot
// check ([Server.warnTunnelGaps]).

// tunnelNote ends the detail of a host-level refusal.
const tunnelNote = "; tunnel mode cannot check paths, and this covers every URL of the site, so the CONNECT is refused"

// tunnelPolicies is the TDMRep, then license, outcome of the CONNECT of
// st to u, open by robots.txt (st.Decision): refused is false when
// neither covers every URL of the site.
func (s *Server) tunnelPolicies(ctx context.Context, l *live, st *requestState, u *url.URL) (o outcome, refused bool) {
	if o, refused = l.tdm.onTunnel(ctx, u, st); refused {
		return o, true
	}
	return l.lic.onTunnel(ctx, u, st)
}

// onTunnel is the TDMRep step of a CONNECT in tunnel mode: tdmrep.json's
// verdict on every URL of u's site ([enforce.Enforcer.TDMRepSite]).
func (t tdmrepStep) onTunnel(ctx context.Context, u *url.URL, st *requestState) (outcome, bool) {
	if !t.binds(st) {
		return outcome{}, false
	}
	v := t.enf.TDMRepSite(ctx, u)
	if !v.Checked {
		return outcome{}, false
	}
	v.Rule, v.Policy = cleanRule(v.Rule), cleanRule(v.Policy) // from the origin's file
	switch {
	case v.Reserved():
		d := tdmDecision(st.Decision, enforce.ReasonTDMReserved, v)
		d.Detail += tunnelNote
		return t.verdict(st, d, http.Header{HeaderTDM: {tdmHeader(v.Verdict, false)}}), true
	case v.Unknown && t.deny && t.enforce:
		d := tdmDecision(st.Decision, enforce.ReasonTDMUnknown, v)
		d.Detail += tunnelNote
		return t.verdict(st, d, nil), true
	}
	return outcome{}, false
}

// onTunnel is the license step of a CONNECT in tunnel mode: the
// licenses' verdict on every URL of u's site
// ([enforce.Enforcer.LicensesSite]). A configured token cannot be added
// inside a tunnel: a license that needs one is license-required.
func (l licenseStep) onTunnel(ctx context.Context, u *url.URL, st *requestState) (outcome, bool) {
	mode := l.modeOf(st)
	if mode == config.LicenseOff {
		return outcome{}, false
	}
	v := l.enf.LicensesSite(ctx, u, st.Decision.Agent, st.Purposes)
	if !v.Checked {
		return outcome{}, false
	}
	v = cleanLicense(v)
	if v.State == rsl.Required {
		v.Token = "missing"
		if _, ok := l.tokens[v.TokenServer]; ok {
			v.Token = "tunnel"
		}
	}
	reason := licenseReason(v, l.deny)
	if reason == "" {
		return outcome{}, false
	}
	st.Decision.License = v
	d := licenseDecision(st.Decision, reason)
	d.Detail += tunnelNote
	if mode != config.LicenseEnforce || l.report {
		if mode == config.LicenseEnforce && st.Decision.Allowed {
			st.Decision = d
		}
		return note(audit.DecisionReported, d), true
	}
	o := refuse(d)
	o.header = http.Header{HeaderLicense: {licenseHeader(v)}}
	return o, true
}

// warnTunnelGaps logs, at start and at each reload, one warning naming
// what tunnel mode cannot check when cfg enforces TDMRep or RSL licenses
// (license.mode enforce globally or for one of ids): they decide only
// where they cover every URL of a site.
func (s *Server) warnTunnelGaps(cfg *config.Config, ids []access.Identity) {
	mode := cfg.HTTPS.Mode
	if s.https != nil {
		mode = s.https.mode // a restart changes it, not a reload
	}
	if mode != config.HTTPSModeTunnel {
		return
	}
	var what []string
	if cfg.License.Mode == config.LicenseEnforce || anyLicenseEnforce(ids) {
		what = append(what, "RSL licenses (license.mode enforce)")
	}
	if cfg.TDMRep.Mode == config.TDMRepEnforce {
		what = append(what, "TDMRep (tdmrep.mode enforce)")
	}
	if len(what) == 0 {
		return
	}
	s.log.Warn().Msg("https.mode is tunnel: " + strings.Join(what, " and ") + " are enforced only where they cover every URL of a site; " +
		"a license or tdmrep.json rule for some paths cannot be checked inside a tunnel (the tunnel opens, audited tunnel-unenforced); " +
		"use https.mode mitm to enforce them per URL")
}

// anyLicenseEnforce reports whether one of ids has license=enforce.
func anyLicenseEnforce(ids []access.Identity) bool {
	for _, id := range ids {
		if config.LicenseMode(id.License) == config.LicenseEnforce {
			return true
		}
	}
	return false
}
