package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

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
