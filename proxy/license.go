package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// RSL licenses in the proxy. For a request whose crawler declares
// purposes, licenseStep decides before the request leaves by the RSL
// license documents the origin's robots.txt names for the agent
// (enforce.Enforcer.Licenses): a prohibited use is refused with 403
// license-prohibited, a use that needs a license token robotsgate has
// none for with 403 license-required, and unreadable terms with 403
// license-unknown when usage.unknown is deny (license.mode enforce,
// outside report mode); otherwise the verdict is audited and the
// response annotated with X-Robotsgate-License. A configured token is
// sent as Authorization: License TOKEN only on a request whose own
// origin's license names that token's License Server (compared as
// canonical origins), never on a refused request, and never replaces an
// Authorization header the client sent.

// HeaderLicense is the header robotsgate adds to a forwarded response
// when RSL licenses were consulted: the state, the deciding use and the
// license document, e.g. `prohibited; use=ai-train;
// license="https://example.com/license.xml"`. A value the origin sent
// itself is removed.
const HeaderLicense = "X-Robotsgate-License"

// licenseStep is the RSL license step, on both sides of the pipeline.
//
// State: reads the verdict (Purposes, Decision, Decided) and Live; writes
// the verdict (Decision, Answered through settle) ([requestState]).
type licenseStep struct {
	enf    *enforce.Enforcer
	mode   config.LicenseMode
	report bool              // mode report: refusals are audited, not made
	deny   bool              // usage.unknown deny: unreadable terms refuse
	tokens map[string]string // canonical License Server origin → token
}

// newLicenseStep is the license step of cfg (validated: its tokens
// parse).
func newLicenseStep(cfg *config.Config, enf *enforce.Enforcer) licenseStep {
	tokens, _ := config.LicenseTokens(cfg.License.Tokens)
	return licenseStep{enf: enf, mode: cfg.License.Mode, report: cfg.Mode == config.ModeReport,
		deny: cfg.Usage.Unknown == config.UsageUnknownDeny, tokens: tokens}
}

// modeOf is the license mode of the request of st: its user's, else the
// configured one.
func (l licenseStep) modeOf(st *requestState) config.LicenseMode {
	if m := config.LicenseMode(st.identity().License); m != "" {
		return m
	}
	return l.mode
}

func (l licenseStep) onRequest(r *http.Request, st *requestState) outcome {
	mode := l.modeOf(st)
	if mode == config.LicenseOff || !st.Decided || st.Answered || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		return outcome{}
	}
	var v enforce.LicenseVerdict
	if origin := st.Decision.Origin; origin != "" { // the robots decision's, made for r.URL: not worked out again
		v = l.enf.LicensesOf(r.Context(), r.URL, origin, r.Method, st.Decision.Agent, st.Purposes)
	} else {
		v = l.enf.Licenses(r.Context(), r.URL, r.Method, st.Decision.Agent, st.Purposes)
	}
	if !v.Checked {
		return outcome{}
	}
	v = cleanLicense(v)
	if v.State == rsl.Required {
		v.Token = l.provideToken(r, v.TokenServer)
	}
	st.Decision.License = v
	reason := licenseReason(v, l.deny)
	if reason == "" || st.Decision.Reason == answer.ReasonSiteException { // the operator's written permission: annotated only
		return outcome{}
	}
	d := licenseDecision(st.Decision, reason)
	if mode != config.LicenseEnforce || l.report {
		if mode == config.LicenseEnforce && st.Decision.Allowed {
			st.Decision = d // marked report-only on the response (finish)
		}
		return note(audit.DecisionReported, d)
	}
	if v.Token == "sent" {
		r.Header.Del("Authorization") // never on a refused request
	}
	o := refuse(d)
	o.header = http.Header{HeaderLicense: {licenseHeader(v)}}
	return o
}

// provideToken adds the configured token of server to r unless the
// client sent an Authorization of its own, and says how the token is
// provided: "sent", "client", "missing", or "http" (configured, but
// never sent in clear text: only an https request carries it).
func (l licenseStep) provideToken(r *http.Request, server string) string {
	if r.Header.Get("Authorization") != "" {
		return "client"
	}
	tok, ok := l.tokens[server]
	switch {
	case !ok || server == "":
		return "missing"
	case r.URL.Scheme != "https":
		return "http"
	}
	r.Header.Set("Authorization", "License "+tok)
	return "sent"
}

// licenseReason is the reason a verdict refuses with, "" when it does
// not: prohibited, a token missing, or (with deny) terms unknown.
func licenseReason(v enforce.LicenseVerdict, deny bool) enforce.Reason {
	switch {
	case v.State == rsl.Prohibited:
		return enforce.ReasonLicenseProhibited
	case v.State == rsl.Required && (v.Token == "missing" || v.Token == "http" || v.Token == "tunnel"):
		return enforce.ReasonLicenseRequired
	case v.Unknown && deny:
		return enforce.ReasonLicenseUnknown
	}
	return ""
}

// decide adds to d, the decision of u for agent and purposes, the
// verdict of the RSL licenses, as /v1/decision shows it (a configured
// token counts as provided).
func (l licenseStep) decide(ctx context.Context, u *url.URL, purposes aipref.Set, d enforce.Decision) enforce.Decision {
	if l.mode == config.LicenseOff || !d.Allowed {
		return d
	}
	v := l.enf.Licenses(ctx, u, http.MethodGet, d.Agent, purposes)
	if !v.Checked {
		return d
	}
	v = cleanLicense(v)
	if v.State == rsl.Required {
		v.Token = "missing"
		if _, ok := l.tokens[v.TokenServer]; ok {
			v.Token = map[bool]string{true: "sent", false: "http"}[u.Scheme == "https"]
		}
	}
	d.License = v
	if reason := licenseReason(v, l.deny); reason != "" && l.mode == config.LicenseEnforce && d.Reason != answer.ReasonSiteException {
		return licenseDecision(d, reason)
	}
	return d
}

func (l licenseStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	resp.Header.Del(HeaderLicense) // also with license.mode off: never the origin's
	if v := st.Decision.License; st.Decided && v.Checked {
		resp.Header.Set(HeaderLicense, licenseHeader(v))
	}
	return resp, outcome{}
}

// cleanLicense bounds and cleans the strings of v that come from the
// origin's files.
func cleanLicense(v enforce.LicenseVerdict) enforce.LicenseVerdict {
	v.Content, v.Server, v.Note, v.License = cleanRule(v.Content), cleanRule(v.Server), cleanRule(v.Note), cleanRule(v.License)
	v.Payment = cleanRule(v.Payment)
	return v
}

// licenseDecision is the refusal, for reason, of the request decided d
// by its license verdict.
func licenseDecision(d enforce.Decision, reason enforce.Reason) enforce.Decision {
	v := d.License
	d.Allowed, d.Reason, d.Rule, d.Line, d.UsageBlocked = false, reason, "", 0, 0
	switch reason {
	case enforce.ReasonLicenseUnknown:
		d.Detail = v.Note + "; usage.unknown is deny"
	case enforce.ReasonLicenseRequired:
		d.Detail = "the license " + v.License + " grants " + v.Use + " only with a license token"
		if v.Server != "" {
			d.Detail += " of the License Server " + v.TokenServer
		}
		if v.Payment != "" {
			d.Detail += " (payment: " + v.Payment + ")"
		}
		switch v.Token {
		case "http":
			d.Detail += ", which robotsgate sends only over https"
		case "tunnel":
			d.Detail += ", which robotsgate cannot add inside a tunnel (https.mode tunnel)"
		default:
			d.Detail += ", and license.tokens holds none for it"
		}
	default:
		d.Detail = "the license " + v.License + " does not permit " + v.Use + " for <content url=\"" + v.Content + "\">"
		if v.Via != "" {
			d.Detail += ", decided on " + v.Via
		}
	}
	return d
}

// licenseHeader is the [HeaderLicense] value of v.
func licenseHeader(v enforce.LicenseVerdict) string {
	s := answer.LicenseState(v)
	if v.Use != "" {
		s += "; use=" + v.Use
	}
	if v.License != "" {
		s += `; license="` + strings.ReplaceAll(v.License, `"`, "%22") + `"`
	}
	if v.Token != "" {
		s += "; token=" + v.Token
	}
	return s
}
