package proxy

import (
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// Usage preferences of a response: what it says its content may be used
// for (Content-Usage, Content-Signal, noai / noimageai), held against the
// purposes the request declared (declared in state.go). robots.txt's own
// usage preferences are decided by enforce, in the robots step.

// HeaderUsage is the header robotsgate adds to a forwarded response whose
// usage preferences are stated (by robots.txt for the URL, by a
// Content-Usage or Content-Signal response header or by a noai/noimageai
// tag): the most restrictive of them for each purpose (what a crawler
// declaring it is held to), then the lowest content-use level, in the
// vocabulary's serialisation, e.g. "train-ai=n, search=y, use=reference".
// A value the origin sent itself is removed.
const HeaderUsage = "X-Robotsgate-Usage"

// maxUsageRule bounds the rule text quoted from a response header.
const maxUsageRule = 256

// usageStep is the response step of usage preferences. On every
// forwarded response it sets [HeaderUsage] to the preferences stated for
// it (robots.txt's for the URL combined with the response's own). When
// the response itself (a Content-Usage or Content-Signal header, or noai
// / noimageai for the agent, noimageai only on image/* responses)
// disallows a declared purpose, or its Content-Signal use= level is
// below the declared content use, it audits that (reported, annotate)
// or, with usage.response enforce outside report mode, refuses the
// response with 403 usage-disallowed. Responses robotsgate generated
// are left alone: it sees only the origin's ([fromOrigin]).
//
// State: reads the caller (Agent), the verdict (Purposes, ContentUse,
// Decision, Decided) and Live; writes the verdict (Answered through settle)
// ([requestState]).
type usageStep struct{ enforce bool }

func (u usageStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	resp.Header.Del(HeaderUsage)
	var fromRobots enforce.Usage
	var siteUse aipref.Use
	if st.Decided {
		fromRobots, siteUse = st.Decision.Usage, st.Decision.SiteUse.Level
	}
	fromResp, respUse := responseUsage(resp, st.Agent)
	prefs := fromRobots.Prefs().Combine(fromResp.Prefs()).WithUse(aipref.CombineUse(siteUse, respUse.Level))
	if prefs.IsZero() {
		return resp, outcome{}
	}
	resp.Header.Set(HeaderUsage, prefs.String())
	blocked := fromResp.Prefs().Disallows(st.Purposes) | unreadableBlocked(&fromResp, st)
	useBlocked := !respUse.Level.Permits(st.ContentUse)
	if blocked == 0 && !useBlocked {
		return resp, outcome{}
	}
	d := responseUsageDecision(st.Req, st, &fromResp, blocked)
	if useBlocked {
		responseUseRefusal(&d, st.ContentUse, respUse, blocked == 0)
	}
	return onResponseVerdict(resp, d, u.enforce, http.Header{HeaderUsage: {prefs.String()}})
}

// responseUsage returns the usage preferences resp binds a crawler to
// for agent, for a 2xx response ([enforce.Usage.Hold]): its Content-Usage
// header ([aipref.ParseHeader]), its Content-Signal header
// ([aipref.ParseContentSignalHeader]) and noai / noimageai in its robot
// tags (the scan the round trip made, or only its X-Robots-Tag headers
// when none was made), most restrictive first; and the content-use
// level of its Content-Signal header.
func responseUsage(resp *http.Response, agent string) (v enforce.Usage, use robots.UseVerdict) {
	if resp.StatusCode/100 != 2 {
		return v, use
	}
	if vals := resp.Header.Values("Content-Usage"); len(vals) > 0 {
		holdHeader(&v, aipref.ParseHeader(vals), enforce.SourceContentUsageHeader, "Content-Usage: ", vals)
	}
	if vals := resp.Header.Values("Content-Signal"); len(vals) > 0 {
		ps := aipref.ParseContentSignalHeader(vals)
		rule := holdHeader(&v, ps, enforce.SourceContentSignalHeader, "Content-Signal: ", vals)
		if ps.Use() != aipref.UseUnknown {
			use = robots.UseVerdict{Level: ps.Use(), Source: enforce.SourceContentSignalHeader, Rule: rule}
		}
	}
	if v[aipref.TrainAI].Pref == aipref.Disallowed {
		return v, use
	}
	scan := scannedTags(resp)
	image := isImage(resp)
	for _, src := range []struct {
		label string
		ds    []robottag.Directive
	}{{"X-Robots-Tag: ", scan.Header}, {"meta robots: ", scan.Meta}} {
		if ps, dir := robottag.Usage(src.ds, agent, image); ps.Get(aipref.TrainAI) == aipref.Disallowed {
			v.Hold(aipref.TrainAI, robots.UsageStatement{Pref: aipref.Disallowed, Source: enforce.SourceRobotTag, Rule: cleanRule(src.label + dir.String())})
			break
		}
	}
	return v, use
}

// holdHeader holds v to the preferences ps that the response header
// field lines vals (named by label, "Content-Usage: ") state, with source
// src; it returns the rule quoted for them.
func holdHeader(v *enforce.Usage, ps aipref.Prefs, src robots.UsageSource, label string, vals []string) string {
	rule := cleanRule(label + strings.Join(vals, ", "))
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if ps.Get(p) != aipref.Unknown || ps.Unparsed().Has(p) { // an unreadable statement is stated unknown
			v.Hold(p, robots.UsageStatement{Pref: ps.Get(p), Source: src, Rule: rule})
		}
	}
	return rule
}

// responseUseRefusal makes d, a refusal after the response, say that the
// response's content-use level use is below the declared content use
// want; only says whether it is the sole reason (it then names the rule).
func responseUseRefusal(d *enforce.Decision, want aipref.Use, use robots.UseVerdict, only bool) {
	d.ContentUse, d.ContentUseBlocked = want, true
	if aipref.CombineUse(d.SiteUse.Level, use.Level) != d.SiteUse.Level {
		d.SiteUse = use
	}
	why := enforce.ContentUseDetail(want, use.Level, " by the response")
	if only {
		d.Rule, d.Line, d.Detail = use.Rule, 0, why
		return
	}
	d.Detail += "; " + why
}

// scannedTags returns the robot-tag scan of resp the round trip made
// ([forwardTripper]), or, when it made none, resp's X-Robots-Tag headers:
// the body is never scanned twice.
func scannedTags(resp *http.Response) *tagScan {
	if s := bodyscan.Of(resp); s != nil {
		return s
	}
	return &tagScan{Header: robottag.ParseXRobotsTag(resp.Header.Values("X-Robots-Tag"))}
}

// isImage reports whether resp's media type is image/*.
func isImage(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if v := strings.TrimLeft(ct, " \t\n\v\f\r"); v == "" || (v[0] < utf8.RuneSelf && v[0]|0x20 != 'i') {
		// No media type, or one whose first letter (ASCII, which no
		// lower-casing turns into an "i") is not image's: not image/*.
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.HasPrefix(mt, "image/")
}

// cleanRule is s, a rule quoted from a response (it comes from the
// origin), on one line and bounded.
func cleanRule(s string) string { return answer.BoundedLine(s, maxUsageRule) }

// responseUsageDecision is the refusal of req, decided st.Decision, by
// the response's usage preferences v, which disallow the declared
// purposes blocked.
func responseUsageDecision(req *http.Request, st *requestState, v *enforce.Usage, blocked aipref.Set) enforce.Decision {
	d := st.Decision
	if !st.Decided {
		d = enforce.Decision{Agent: st.Agent, Purposes: st.Purposes, ContentUse: st.ContentUse}
		if req != nil && req.URL != nil {
			d.URL = enforce.RedactedURL(req.URL)
			d.Origin, _ = enforce.Origin(req.URL)
		}
	}
	d.Allowed, d.Reason, d.UsageBlocked, d.ContentUseBlocked = false, enforce.ReasonUsageDisallowed, blocked, false
	d.Rule, d.Line, d.Detail = "", 0, ""
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		// The response's statement shows where it is more restrictive than
		// robots.txt's, or states one where robots.txt states none.
		if robots.StatementRank(v[p]) > robots.StatementRank(d.Usage[p]) {
			d.Usage[p] = v[p]
		}
	}
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if !blocked.Has(p) {
			continue
		}
		if d.Rule == "" {
			d.Rule = d.Usage[p].Rule
		} else {
			d.Detail += "; "
		}
		if v[p].Pref == aipref.Disallowed {
			d.Detail += "purpose " + p.String() + " disallowed by the response"
		} else {
			d.Detail += "purpose " + p.String() + ": the response's statement names it but cannot be read, and usage.unknown is deny"
		}
	}
	return d
}

// unreadableBlocked returns the purposes st declared that the response's
// usage v states unknown because its statement cannot be read
// ("Content-Signal: ai-train=no;"), when usage.unknown is deny: such a
// statement binds as an unknown preference, not as silence.
func unreadableBlocked(v *enforce.Usage, st *requestState) aipref.Set {
	if st.Live == nil || st.Live.cfg.Usage.Unknown != config.UsageUnknownDeny {
		return 0
	}
	var out aipref.Set
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if st.Purposes.Has(p) && v[p].Pref == aipref.Unknown && v[p].Source != robots.UsageNone {
			out |= aipref.SetOf(p)
		}
	}
	return out
}
