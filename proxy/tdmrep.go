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
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// The W3C TDM Reservation Protocol in the proxy. For a request whose
// declared purposes meet tdmrep.purposes, tdmrepStep decides before the
// request leaves by the origin's /.well-known/tdmrep.json
// (enforce.Enforcer.TDMRep), and after the response by its tdm-reservation
// / tdm-policy header fields and <meta name="tdm-reservation|tdm-policy">
// elements (read by the robot-tag scan), each superseding the one before
// as the protocol says. A reserved URL is refused (tdmrep.mode enforce,
// outside report mode) with 403 tdm-reserved, or audited as reported;
// under an operator's allow exception (sites:, written permission) it is
// only annotated.

// HeaderTDM is the header robotsgate adds to a forwarded response for a
// crawler TDMRep binds, when TDMRep declares anything for it: the
// reservation in force (1, 0 or unknown), where it was declared
// (tdmrep.json, header, meta) and its tdm-policy, e.g.
// `1; source=header; policy="https://example.com/policy.json"`. A value
// the origin sent itself is removed.
const HeaderTDM = "X-Robotsgate-TDM"

// tdmrepStep is the TDMRep step, on both sides of the pipeline.
//
// State: reads the verdict (Purposes, Decision, Decided); writes the
// verdict (Decision, Answered through settle) ([requestState]).
type tdmrepStep struct {
	enf      *enforce.Enforcer
	on       bool       // tdmrep.mode is not off
	enforce  bool       // tdmrep.mode enforce: reserved URLs are refusals
	report   bool       // mode report: refusals are audited, not made
	deny     bool       // usage.unknown deny: an unreadable tdmrep.json refuses
	purposes aipref.Set // tdmrep.purposes
}

// newTDMStep is the TDMRep step of cfg.
func newTDMStep(cfg *config.Config, enf *enforce.Enforcer) tdmrepStep {
	return tdmrepStep{
		enf: enf, on: cfg.TDMRep.Mode != config.TDMRepOff, enforce: cfg.TDMRep.Mode == config.TDMRepEnforce,
		report: cfg.Mode == config.ModeReport, deny: cfg.Usage.Unknown == "deny", purposes: cfg.TDMRep.Purposes,
	}
}

// binds reports whether TDMRep applies to the request of st.
func (t tdmrepStep) binds(st *requestState) bool {
	return t.on && st.Purposes&t.purposes != 0
}

func (t tdmrepStep) onRequest(r *http.Request, st *requestState) outcome {
	if !t.binds(st) || !st.Decided || st.Answered || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		return outcome{}
	}
	v := t.enf.TDMRep(r.Context(), r.URL, r.Method) // tdmrep.json itself: not checked
	if !v.Checked {
		return outcome{}
	}
	v.Rule, v.Policy = cleanRule(v.Rule), cleanRule(v.Policy) // from the origin's file
	st.Decision.TDM = v
	switch {
	case st.Decision.Reason == answer.ReasonSiteException: // the operator's written permission: annotated only
	case v.Reserved():
		return t.verdict(st, tdmDecision(st.Decision, enforce.ReasonTDMReserved, v), http.Header{HeaderTDM: {tdmHeader(v.Verdict, v.Unknown)}})
	case v.Unknown && t.deny && t.enforce:
		return t.verdict(st, tdmDecision(st.Decision, enforce.ReasonTDMUnknown, v), nil)
	}
	return outcome{}
}

// decide adds to d, the robots decision of u for a crawler declaring
// purposes, the TDMRep verdict of tdmrep.json, as /v1/decision shows it:
// a URL tdmrep.json reserves is refused (tdm-reserved) when tdmrep.mode
// is enforce, else only described.
func (t tdmrepStep) decide(ctx context.Context, u *url.URL, purposes aipref.Set, d enforce.Decision) enforce.Decision {
	if !t.on || purposes&t.purposes == 0 || !d.Allowed {
		return d
	}
	v := t.enf.TDMRep(ctx, u, http.MethodGet)
	d.TDM = v
	switch {
	case !t.enforce, d.Reason == answer.ReasonSiteException:
	case v.Reserved():
		return tdmDecision(d, enforce.ReasonTDMReserved, v)
	case v.Unknown && t.deny:
		return tdmDecision(d, enforce.ReasonTDMUnknown, v)
	}
	return d
}

// verdict is the outcome of d, a TDMRep refusal of the request of st
// before it leaves: a 403 in enforce mode, else audited as reported.
func (t tdmrepStep) verdict(st *requestState, d enforce.Decision, h http.Header) outcome {
	if !t.enforce {
		return note(audit.DecisionReported, d)
	}
	if t.report {
		if st.Decision.Allowed {
			st.Decision = d // marked report-only on the response (finish)
		}
		return note(audit.DecisionReported, d)
	}
	o := refuse(d)
	o.header = h
	return o
}

func (t tdmrepStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	resp.Header.Del(HeaderTDM) // also with tdmrep.mode off: never the origin's
	if !t.binds(st) || !st.Decided || resp.StatusCode/100 != 2 {
		return resp, outcome{}
	}
	v := st.Decision.TDM
	v.Verdict = responseTDM(resp, v.Verdict)
	st.Decision.TDM.Checked = true
	if v.Reservation != tdmrep.Unset || v.Unknown {
		resp.Header.Set(HeaderTDM, tdmHeader(v.Verdict, v.Unknown && v.Source == tdmrep.SourceNone))
	}
	if !v.Reserved() || v.Source == tdmrep.SourceFile || st.Decision.TDM.Reserved() || st.Decision.Reason == answer.ReasonSiteException {
		st.Decision.TDM = v
		return resp, outcome{} // the file's reservation was decided (and audited) before the request
	}
	d := tdmDecision(st.Decision, enforce.ReasonTDMReserved, v)
	enforcing := t.enforce && !t.report
	if !enforcing {
		st.Decision.TDM = v
	}
	return onResponseVerdict(resp, d, enforcing, http.Header{HeaderTDM: {tdmHeader(v.Verdict, false)}})
}

// responseTDM returns the TDMRep verdict in force after resp: prev (the
// file's) superseded by resp's header fields, then by its HTML meta
// elements (the scan the round trip made).
func responseTDM(resp *http.Response, prev tdmrep.Verdict) tdmrep.Verdict {
	hv, ok := tdmrep.ParseHeader(resp.Header.Values("Tdm-Reservation"), resp.Header.Values("Tdm-Policy"))
	v := tdmrep.Supersede(prev, hv, ok)
	if scan := bodyscan.Of(resp); scan != nil {
		res, has := scan.Named[bodyscan.MetaTDMReservation]
		mv, ok := tdmrep.ParseMeta(res, has, scan.Named[bodyscan.MetaTDMPolicy])
		v = tdmrep.Supersede(v, mv, ok)
	}
	v.Rule, v.Policy = cleanRule(v.Rule), cleanRule(v.Policy)
	return v
}

// tdmDecision is the refusal, for reason, of the request decided d, by
// the TDMRep verdict v.
func tdmDecision(d enforce.Decision, reason enforce.Reason, v enforce.TDMVerdict) enforce.Decision {
	d.Allowed, d.Reason, d.TDM = false, reason, v
	d.Rule, d.Line, d.UsageBlocked = v.Rule, 0, 0
	switch {
	case reason == enforce.ReasonTDMUnknown:
		d.Rule = ""
		d.Detail = v.FileNote + "; usage.unknown is deny"
	case v.Source == tdmrep.SourceFile:
		d.Detail = "TDM rights reserved by " + v.FileURL
		if v.Via != "" {
			d.Detail += ", decided on " + v.Via
		}
	default:
		d.Detail = "TDM rights reserved by the response's " + v.Source.String()
	}
	if v.Policy != "" {
		d.Detail += "; tdm-policy: " + v.Policy
	}
	return d
}

// tdmHeader is the [HeaderTDM] value of v (unknown: the file could not be
// read and nothing else declared).
func tdmHeader(v tdmrep.Verdict, unknown bool) string {
	if unknown {
		return "unknown; source=tdmrep.json"
	}
	s := v.Reservation.String()
	if v.Source != tdmrep.SourceNone {
		s += "; source=" + v.Source.String()
	}
	if v.Policy != "" {
		s += `; policy="` + strings.ReplaceAll(answer.WithoutControl(v.Policy, -1), `"`, "%22") + `"`
	}
	return s
}
