package enforce

import (
	"strconv"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// ReasonUsageDisallowed: Allow/Disallow let the URL through, but the
// site's usage preferences disallow a purpose the crawler declared (or
// state none for it while unknown preferences are denied), or its
// content-use level is below the crawler's declared content use.
const ReasonUsageDisallowed Reason = "usage-disallowed"

// Sources of a usage preference stated by the response rather than by
// robots.txt (beside [robots.ContentUsage] and [robots.ContentSignal]).
const (
	SourceContentUsageHeader  robots.UsageSource = 100 + iota // a Content-Usage response header
	SourceContentSignalHeader                                 // a Content-Signal response header
	SourceRobotTag                                            // noai / noimageai in X-Robots-Tag or meta robots
)

// UsageSources returns every source of a usage preference robotsgate
// reads, [robots.UsageNone] first (no source: unknown). A new source is
// added here and named in [SourceName]; metrics expose one series per
// source.
func UsageSources() []robots.UsageSource {
	return []robots.UsageSource{robots.UsageNone, robots.ContentUsage, robots.ContentSignal,
		SourceContentUsageHeader, SourceContentSignalHeader, SourceRobotTag}
}

// SourceName names s in answers, audit records and metrics:
// "content-usage", "content-signal" (robots.txt lines),
// "content-usage-header", "content-signal-header", "robot-tag" (the
// response), "" for [robots.UsageNone].
func SourceName(s robots.UsageSource) string {
	switch s {
	case SourceContentUsageHeader:
		return "content-usage-header"
	case SourceContentSignalHeader:
		return "content-signal-header"
	case SourceRobotTag:
		return "robot-tag"
	}
	return s.String()
}

// Usage is the usage preferences that bind a crawler on one URL, one
// verdict per purpose, indexed by [aipref.Purpose]: for purpose p, the
// most restrictive of the preferences stated for the purposes
// aipref.Binds(p), by any source (see Hold). The zero value states none.
type Usage [aipref.NumPurposes]robots.UsageStatement

// Hold adds v, a preference a source states for the purpose (label)
// stated, to u: every purpose that stated binds ([aipref.Binds]) takes v
// when v is more restrictive than its verdict so far
// ([robots.StatementRank]: disallowed, then an unknown a source states
// because it cannot be read, then allowed), so that the first verdict of
// equal restriction is kept. It is the one place where a stated
// preference becomes a binding one; each source of usage preferences
// (robots.txt lines, response headers, robot tags) goes through it.
func (u *Usage) Hold(stated aipref.Purpose, v robots.UsageStatement) {
	r := robots.StatementRank(v)
	if r == 0 {
		return
	}
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if aipref.Binds(p).Has(stated) && r > robots.StatementRank(u[p]) {
			u[p] = v
		}
	}
}

// heldUsage returns the usage robots.txt's verdicts ru bind a crawler
// to: for each purpose, both the verdict of robots.txt's precedence
// (Content-Usage, else Content-Signal: ru.For) and the Content-Signal
// verdict alone (ru.Signal), so that a crawler is held to both kinds of
// line and the most restrictive wins.
func heldUsage(ru *robots.Usage) Usage {
	var u Usage
	for q := aipref.Purpose(0); q < aipref.NumPurposes; q++ {
		u.Hold(q, ru.For(q))
		u.Hold(q, ru.Signal(q))
	}
	return u
}

// For returns the verdict for purpose p (the zero verdict for a value out
// of range).
func (u *Usage) For(p aipref.Purpose) robots.UsageStatement {
	if int(p) < len(u) {
		return u[p]
	}
	return robots.UsageStatement{}
}

// Prefs returns the preferences of u without their sources; its String
// is the form of an annotation header ("train-ai=n, search=y").
func (u *Usage) Prefs() aipref.Prefs {
	var ps aipref.Prefs
	for i := range u {
		ps = ps.With(aipref.Purpose(i), u[i].Pref)
	}
	return ps
}

// PurposeUsage is the usage preference for one purpose, as answers,
// audit records and "robotsgate check -json" show it.
type PurposeUsage struct {
	Pref   string `json:"pref"`             // allowed, disallowed or unknown
	Source string `json:"source,omitempty"` // SourceName
	Rule   string `json:"rule,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// Shown returns the usage preferences of u to show, by purpose name:
// every purpose with a stated preference (an unreadable one included),
// and every purpose of declared
// when the URL's Allow/Disallow rules permit it (permitted; "unknown"
// when none is stated); nil when there is none.
func (u *Usage) Shown(declared aipref.Set, permitted bool) map[string]PurposeUsage {
	var m map[string]PurposeUsage
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		uv := u.For(p)
		if robots.StatementRank(uv) == 0 && !(permitted && declared.Has(p)) {
			continue
		}
		if m == nil {
			m = make(map[string]PurposeUsage, aipref.NumPurposes)
		}
		m[p.String()] = PurposeUsage{Pref: uv.Pref.String(), Source: SourceName(uv.Source), Rule: uv.Rule, Line: uv.Line}
	}
	return m
}

// ContentUseShown is the content use of a decision (Content Signals
// "use="), as answers, audit records and "robotsgate check -json" show
// it: the declared content use, the site's level and whether it refused
// the URL.
type ContentUseShown struct {
	// ContentUse is the declared content use; SiteUse the level the site
	// states for the URL (robots.txt, or the response); ContentUseDisallowed is set
	// when SiteUse is below ContentUse.
	ContentUse           string        `json:"content_use,omitempty"`
	SiteUse              *SiteUseShown `json:"site_use,omitempty"`
	ContentUseDisallowed bool          `json:"content_use_disallowed,omitempty"`
}

// SiteUseShown is a site's content-use level with where it is stated.
type SiteUseShown struct {
	Level  string `json:"level"`            // immediate, reference or full
	Source string `json:"source,omitempty"` // SourceName: content-signal, content-signal-header
	Rule   string `json:"rule,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// ShowContentUse returns the content use to show of a decision for the
// declared content use, the site's level site, and whether that refused
// the URL (blocked).
func ShowContentUse(declared aipref.Use, site robots.UseVerdict, blocked bool) ContentUseShown {
	j := ContentUseShown{ContentUse: declared.String(), ContentUseDisallowed: blocked}
	if site.Level != aipref.UseUnknown {
		j.SiteUse = &SiteUseShown{Level: site.Level.String(), Source: SourceName(site.Source), Rule: site.Rule, Line: site.Line}
	}
	return j
}

// UsagePolicy is what usage preferences do to a decision.
type UsagePolicy struct {
	// Purposes are what the crawler uses content for. A URL whose usage
	// preferences disallow one of them is refused; with none, usage
	// preferences are reported and never refuse.
	Purposes aipref.Set
	// UnknownDeny refuses a URL for which robots.txt states no
	// preference for a declared purpose (usage.unknown: deny).
	UnknownDeny bool
	// ContentUse is the crawler's declared content use: a URL whose
	// content-use level is known and below it is refused. UseUnknown
	// (none declared): levels are reported and never refuse. An unknown
	// level never refuses, whatever [UnknownDeny] says.
	ContentUse aipref.Use
}

// Verdict is what one robots.txt says about one request path.
type Verdict struct {
	Allowed bool
	Reason  Reason // ReasonAllowed, ReasonDisallowed or ReasonUsageDisallowed
	Group   string // the group that applied ("*" for the default group)
	Rule    string // the deciding rule, e.g. "Allow: /a" or "Content-Usage: /x train-ai=n"; "" when none
	Line    int    // the rule's line; 0 when none
	Detail  string // as Decision.Detail
	// Usage is the usage preferences for the path, for every purpose,
	// declared or not; zero when Allow/Disallow refuses the path.
	Usage Usage
	// UsageBlocked is the declared purposes that refused the path
	// (Reason [ReasonUsageDisallowed]); empty otherwise.
	UsageBlocked aipref.Set
	// SiteUse is the content-use level for the path (the lowest of its
	// spellings'); ContentUseBlocked is set when it refused the path.
	SiteUse           robots.UseVerdict
	ContentUseBlocked bool
}

// RulesVerdict decides path (path[;params][?query], as sent) for agent
// on rules the way Decide does: Allow/Disallow on the path and on every
// other spelling an origin may read it as (the first that disallows
// decides), then, for a path they allow, usage preferences under p.
//
// The usage verdict of each purpose must hold for every spelling: it is
// the most restrictive of the spellings' verdicts, disallowed before
// unknown before allowed, so "/ai-ok/../x" cannot pick up the
// preference of "/ai-ok/" when "/x" states another or none. It
// allocates nothing for a path with no other spelling.
func RulesVerdict(rules *robots.Robots, agent, path string, p UsagePolicy) Verdict {
	s := decideSpellings(rules, agent, path)
	v := Verdict{Allowed: s.v.Allowed, Group: s.v.Group, Detail: s.detail, Usage: s.usage, SiteUse: s.use}
	if s.v.Rule.Line != 0 {
		v.Rule, v.Line = s.v.Rule.String(), s.v.Rule.Line
	}
	if !v.Allowed {
		v.Reason = ReasonDisallowed
		return v
	}
	v.Reason = ReasonAllowed
	applyUsage(&v, p, &s, "")
	return v
}

// restrictiveness orders preferences for the verdict that must hold for
// every spelling of a path.
func restrictiveness(p aipref.Pref) int {
	switch p {
	case aipref.Disallowed:
		return 2
	case aipref.Unknown:
		return 1
	}
	return 0
}

// applyUsage refuses v, allowed so far, when its usage disallows a
// purpose of p (or states none for it while p.UnknownDeny), or its
// content-use level is below p.ContentUse. s.via and s.useVia name the
// spelling whose verdict decided ("" for the path as sent); none says
// why no preference is known at all ("" when a robots.txt was read).
func applyUsage(v *Verdict, p UsagePolicy, s *spelled, none string) {
	var blocked aipref.Set
	first := aipref.Purpose(aipref.NumPurposes)
	for q := aipref.Purpose(0); q < aipref.NumPurposes; q++ {
		if !p.Purposes.Has(q) {
			continue
		}
		if pr := v.Usage[q].Pref; pr == aipref.Disallowed || pr == aipref.Unknown && p.UnknownDeny {
			blocked |= aipref.SetOf(q)
			if first == aipref.NumPurposes {
				first = q
			}
		}
	}
	useBlocked := !v.SiteUse.Level.Permits(p.ContentUse)
	if blocked == 0 && !useBlocked {
		return
	}
	v.Allowed, v.Reason, v.UsageBlocked, v.ContentUseBlocked = false, ReasonUsageDisallowed, blocked, useBlocked
	if blocked == 0 {
		v.Rule, v.Line = v.SiteUse.Rule, v.SiteUse.Line
		v.Detail = ContentUseDetail(p.ContentUse, v.SiteUse.Level, "")
		if s.useVia != "" {
			v.Detail += "; decided on " + s.useVia
		}
		return
	}
	uv := v.Usage[first]
	v.Rule, v.Line = uv.Rule, uv.Line
	v.Detail = usageDetail(v, blocked, none)
	if w := s.via[first]; w != "" {
		v.Detail += "; decided on " + w
	}
	if useBlocked {
		v.Detail += "; " + ContentUseDetail(p.ContentUse, v.SiteUse.Level, "")
	}
}

// ContentUseDetail explains the refusal of a declared content use want
// by a site's lower level site, stated where by says ("" for robots.txt).
func ContentUseDetail(want, site aipref.Use, by string) string {
	return "content use " + want.String() + " is above the site's level " + site.String() + by
}

// usageDetail explains the refusal of the purposes blocked.
func usageDetail(v *Verdict, blocked aipref.Set, none string) string {
	var d string
	for q := aipref.Purpose(0); q < aipref.NumPurposes; q++ {
		if !blocked.Has(q) {
			continue
		}
		if d != "" {
			d += "; "
		}
		if v.Usage[q].Pref == aipref.Disallowed {
			d += "purpose " + q.String() + " disallowed"
		} else {
			d += "purpose " + q.String() + ": usage preference unknown" + unreadable(v.Usage[q]) + none + " and usage.unknown is deny"
		}
	}
	return d
}

// unreadable says, for an unknown preference a source states, that its
// statement cannot be read; "" for one no source states.
func unreadable(v robots.UsageStatement) string {
	if v.Source == robots.UsageNone {
		return ""
	}
	return " (" + strconv.Quote(v.Rule) + " names it, but cannot be read)"
}
