package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/proxy/mitm"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// caExpiryWarning is how long before the CA expires serve starts warning.
const caExpiryWarning = 30 * 24 * time.Hour

// httpsState is the HTTPS part of a Server, set up by installHTTPS.
type httpsState struct {
	mode    config.HTTPSMode
	ca      *tls.Certificate
	caInfo  mitm.CAInfo
	certs   *mitm.CertStore
	mitm    *goproxy.ConnectAction
	hijacks *conns.HijackTracker
}

// installHTTPS sets up CONNECT handling: the port allow-list, and MITM
// with robotsgate's CA (loaded or created now, so a bad CA fails New) or
// host-level tunnels. It registers the CONNECT hook; [Server.install] wraps
// the handler with s.https.hijacks, and Shutdown drains it.
func (s *Server) installHTTPS() error {
	cfg := s.cfg.HTTPS
	h := &httpsState{mode: cfg.Mode, hijacks: conns.NewHijackTracker(conns.LimitsOf(s.cfg.Client))}
	if h.mode == config.HTTPSModeMITM {
		ca, info, err := mitm.LoadOrCreateCA(cfg.DataDir, cfg.CACert, cfg.CAKey, nil)
		if err != nil {
			return err
		}
		h.ca, h.caInfo = ca, info
		h.certs = mitm.NewCertStore(0, nil)
		s.proxy.CertStore = h.certs
		leafConfig := mitm.TLSConfig(ca, h.certs, nil)
		h.mitm = &goproxy.ConnectAction{Action: goproxy.ConnectMitm,
			TLSConfig: func(host string, _ *goproxy.ProxyCtx) (*tls.Config, error) { return leafConfig(host) }}
	}
	s.https = h
	s.proxy.OnRequest().HandleConnectFunc(s.handleConnect)
	return nil
}

// ca returns the CA robotsgate signs leaf certificates with (nil in tunnel
// mode) and where it lives.
// logHTTPS logs the HTTPS set-up: tunnel mode without an agent, the CA
// in use (a warning when it was just created, which names its directory
// and the certificate that clients must trust).
func (s *Server) logHTTPS() {
	if s.https.mode == config.HTTPSModeTunnel && s.cfg.Agent == "" {
		// Many clients send no User-Agent on CONNECT: their tunnels are
		// decided by the "*" group only.
		s.log.Warn().Msg("https.mode is tunnel and no agent is configured: clients that send no User-Agent on CONNECT " +
			"(most do not) are decided by the robots.txt \"*\" group only; set agent to your crawler's product token")
	}
	info := s.https.caInfo
	switch {
	case s.https.ca == nil:
		return
	case info.Created:
		s.log.Warn().Str("ca_cert", info.CertFile).Str("fingerprint", info.Fingerprint).
			Msg("created a new CA in " + filepath.Dir(info.CertFile) + ": every HTTPS client must trust its certificate " +
				info.CertFile + " (`robotsgate ca` says how); a CA made before, elsewhere, is not this one")
	default:
		s.log.Info().Str("ca_cert", info.CertFile).Str("fingerprint", info.Fingerprint).Msg("HTTPS interception with CA")
	}
	if left := time.Until(info.NotAfter); left < caExpiryWarning {
		s.log.Warn().Str("ca_cert", info.CertFile).Time("not_after", info.NotAfter).
			Msg("the CA certificate expires soon: replace it (delete both CA files to generate a new one) and re-distribute it to clients")
	}
}

// handleConnect is the CONNECT hook: it refuses ports outside
// https.allowed_ports, then intercepts (mitm) or decides at host level
// (tunnel).
func (s *Server) handleConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	r := ctx.Req
	st := stateOf(ctx) // st.Redirected: a redirected TLS connection (transparent.go)
	// Requests inside an MITM session inherit the CONNECT's override, or
	// its refusal, which their audit records then carry (agentFor).
	l := s.settings(st)
	st.Agent = agentFor(l.agents, r, st)
	if o, ok := agentTooLong(r, st.Agent); !ok { // refused undecided (state.go)
		st.Agent = ""
		return s.connectAction(ctx, st, o, nil), host
	}
	if o, ok := declare(l.agents, r, st); !ok { // purposes, inherited inside the session (state.go)
		return s.connectAction(ctx, st, o, nil), host
	}

	hostname, p, err := net.SplitHostPort(host)
	if err != nil { // goproxy dials host:80 for a host without a port
		hostname, p = host, "80"
	}
	if hostname == "" {
		d := enforce.Decision{Reason: enforce.ReasonInvalidHost, URL: host, Agent: st.Agent,
			Detail: "CONNECT target " + strconv.Quote(host) + " has no host"}
		return s.connectAction(ctx, st, refuse(d), nil), host
	}
	port, _ := selfaddr.ParsePort(p) // 0 when invalid: in no allow-list
	// Decided and dialed under the host as enforce keys it (destination.go).
	target, o, ok := canonicalConnect(hostname, port, st)
	if !ok {
		return s.connectAction(ctx, st, o, nil), host
	}
	hostname, _, _ = net.SplitHostPort(target)
	u := &url.URL{Scheme: "https", Host: target}
	origin, _ := enforce.Origin(u)

	// the admin API is not reachable through the proxy (proxy/selfaddr)
	dst := destinationStep{self: &s.self}
	if st.Redirected == nil { // a redirected one is pinned to its original destination (transparent.go)
		dst.pins = s.pins
	}
	if pin, self := dst.pin(r, hostname, port); self {
		d := enforce.Decision{Reason: answer.ReasonSelfRequest, URL: u.String(), Origin: origin, Agent: st.Agent,
			Detail: "the CONNECT target " + target + " is robotsgate itself; its admin API is not reachable through the proxy"}
		return s.connectAction(ctx, st, refuse(d), nil), host
	} else if pinned, refused := connectEgress(r, st, u, hostname, pin); refused != nil { // (transport.go, upstream/egressdial.go)
		return s.connectAction(ctx, st, *refused, nil), host
	} else {
		r, ctx.Req = pinned, pinned
	}
	if !l.ports[strconv.Itoa(int(port))] {
		d := enforce.Decision{Reason: answer.ReasonPortForbidden, URL: u.String(), Origin: origin, Agent: st.Agent,
			Detail: "CONNECT to port " + strconv.Itoa(int(port)) + " is not allowed (https.allowed_ports)"}
		return s.connectAction(ctx, st, refuse(d), nil), host
	}
	if s.https.mode == config.HTTPSModeTunnel {
		// Only a TLS ClientHello goes through the tunnel (tunnel.go).
		return s.connectAction(ctx, st, s.tunnel(ctx, st, u), s.tunnelAction(st, target)), target
	}
	s.startMITM(ctx, st, target)
	return s.https.mitm, target
}

// startMITM sets up the MITM session of the CONNECT of ctx to target.
func (s *Server) startMITM(ctx *goproxy.ProxyCtx, st *requestState, target string) {
	ci := conns.InfoFrom(ctx.Req.Context()) // HTTP/1.0 answers end the session through it (forward.go)
	if ci != nil {
		ci.MarkMITM() // Shutdown may end this session between requests
	}
	// goproxy gives every request of the session the CONNECT's
	// UserData: the session, which [Server.enter] puts in its state.
	ctx.UserData = newSession(st, target, ci)
	// Requests inside the session are forwarded by mitmRoundTrip, which
	// answers upstream failures (certificate verification included) with a
	// 502 instead of goproxy's silently closed connection.
	ctx.RoundTripper = mitmTripper{s: s}
}

// tunnel decides a CONNECT in tunnel mode at host level: refused when the
// origin's robots.txt is unreachable or disallows every path for the
// agent, or when its tdmrep.json or RSL licenses cover every URL of the
// site against the declared purposes ([Server.tunnelPolicies]);
// otherwise the tunnel opens and an audit record says that paths inside
// it are not enforced. Report mode audits but never refuses.
func (s *Server) tunnel(ctx *goproxy.ProxyCtx, st *requestState, u *url.URL) outcome {
	l := s.settings(st)
	o := enforce.DecideOptions{Purposes: st.Purposes, ContentUse: st.ContentUse}
	d, purposes := l.robots.decide(u, st.Agent, o, func(o enforce.DecideOptions) enforce.Decision { // site exceptions: siteDecision
		return s.hostDecision(ctx.Req.Context(), u, st.Agent, o)
	})
	st.Purposes = purposes
	st.Decision, st.Decided = d, true
	if d.Allowed && d.Reason != answer.ReasonSiteException { // TDMRep and licenses on the whole site (tunnel.go)
		if o, refused := s.tunnelPolicies(ctx.Req.Context(), l, st, u); refused {
			return o
		}
	}
	switch {
	case d.Allowed:
		return note(audit.DecisionAllowed, d)
	case l.cfg.Mode == config.ModeReport:
		return note(audit.DecisionReported, d)
	}
	return refuse(explainRobots(u.Host, d))
}

// hostDecision is tunnel mode's robots.txt decision on the host of u:
// closed when robots.txt is unreachable or disallows every path for
// agent, open otherwise.
func (s *Server) hostDecision(ctx context.Context, u *url.URL, agent string, o enforce.DecideOptions) enforce.Decision {
	root := *u
	root.Path = "/"
	d := s.enf.Decide(ctx, &root, agent, o)
	d.URL = u.String()
	switch d.Reason {
	case enforce.ReasonAllowed, enforce.ReasonDisallowed:
		// Rules were matched: closed only if no path at all is allowed.
		if en, ok := s.enf.Cached(ctx, d.Origin); ok && en.Parsed != nil && en.Parsed.AllowsNothing(agent) {
			d.Allowed, d.Reason = false, answer.ReasonSiteDisallowed
			d.Detail = "robots.txt disallows every path for this agent; tunnel mode cannot check paths, so the CONNECT is refused"
		} else {
			d.Allowed, d.Reason = true, answer.ReasonTunnelUnenforced
			d.Detail = "tunnel mode: the host is open to this agent; paths inside the tunnel are not checked"
		}
	case enforce.ReasonRobotsUnavailable:
		d.Allowed = true
		d.Reason = answer.ReasonTunnelUnenforced
		d.Detail = "tunnel mode: no robots.txt (" + d.Detail + "); paths inside the tunnel are not checked"
	}
	return d
}

// connectAction carries out the outcome o of a CONNECT: a refusal is
// answered with a real HTTP response (goproxy writes ctx.Resp before
// closing the connection); otherwise the CONNECT goes on with ok.
func (s *Server) connectAction(ctx *goproxy.ProxyCtx, st *requestState, o outcome, ok *goproxy.ConnectAction) *goproxy.ConnectAction {
	if resp := s.settle(ctx.Req, st, o); resp != nil {
		ctx.Resp = resp
		return goproxy.RejectConnect
	}
	return ok
}

// explainUpstreamTLS wraps a certificate verification error with what it
// means and what to do about it; other errors are returned as they are.
func explainUpstreamTLS(host string, err error) error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("the certificate of %s is not signed by a trusted root "+
			"(robotsgate does not connect to unverified servers; if you trust it, add its root CA to https.upstream_roots): %w", host, err)
	case errors.As(err, &hostname):
		return fmt.Errorf("the certificate of %s does not name that host (robotsgate does not connect to unverified servers): %w", host, err)
	case errors.As(err, &invalid), errors.As(err, &verify):
		return fmt.Errorf("the certificate of %s failed verification (robotsgate does not connect to unverified servers): %w", host, err)
	}
	return err
}
