package enforce

import (
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// ReasonUsageDisallowed: Allow/Disallow let the URL through, but the
// site's usage preferences disallow a purpose the crawler declared (or
// state none for it while unknown preferences are denied).
const ReasonUsageDisallowed Reason = "usage-disallowed"

// Usage is the usage preferences robots.txt states for one URL, one
// verdict per purpose, indexed by aipref.Purpose. The zero value states
// none.
type Usage [aipref.NumPurposes]robots.UsageVerdict

// For returns the verdict for purpose p (the zero verdict for a value out
// of range).
func (u *Usage) For(p aipref.Purpose) robots.UsageVerdict {
	if int(p) < len(u) {
		return u[p]
	}
	return robots.UsageVerdict{}
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
	Source string `json:"source,omitempty"` // content-usage, content-signal, or a source of the caller's
	Rule   string `json:"rule,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// Shown returns the usage preferences of u to show, by purpose name:
// every purpose with a stated preference, and every purpose of declared
// when the URL's Allow/Disallow rules permit it (permitted; "unknown"
// when none is stated); nil when there is none. sourceName names each
// preference's source.
func (u *Usage) Shown(declared aipref.Set, permitted bool, sourceName func(robots.UsageSource) string) map[string]PurposeUsage {
	var m map[string]PurposeUsage
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		uv := u.For(p)
		if uv.Pref == aipref.Unknown && !(permitted && declared.Has(p)) {
			continue
		}
		if m == nil {
			m = make(map[string]PurposeUsage, aipref.NumPurposes)
		}
		m[p.String()] = PurposeUsage{Pref: uv.Pref.String(), Source: sourceName(uv.Source), Rule: uv.Rule, Line: uv.Line}
	}
	return m
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
	// (Reason ReasonUsageDisallowed); empty otherwise.
	UsageBlocked aipref.Set
}

// DecideRules decides path (path[;params][?query], as sent) for agent
// on rules the way Decide does: Allow/Disallow on the path and on every
// other spelling an origin may read it as (the first that disallows
// decides), then, for a path they allow, usage preferences under p.
//
// The usage verdict of each purpose must hold for every spelling: it is
// the most restrictive of the spellings' verdicts, disallowed before
// unknown before allowed, so "/ai-ok/../x" cannot pick up the
// preference of "/ai-ok/" when "/x" states another or none. It
// allocates nothing for a path with no other spelling.
func DecideRules(rules *robots.Robots, agent, path string, p UsagePolicy) Verdict {
	s := decideSpellings(rules, agent, path)
	v := Verdict{Allowed: s.v.Allowed, Group: s.v.Group, Detail: s.detail, Usage: s.usage}
	if s.v.Rule.Line != 0 {
		v.Rule, v.Line = s.v.Rule.String(), s.v.Rule.Line
	}
	if !v.Allowed {
		v.Reason = ReasonDisallowed
		return v
	}
	v.Reason = ReasonAllowed
	applyUsage(&v, p, &s.via, "")
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
// purpose of p (or states none while p.UnknownDeny). via names, per
// purpose, the spelling whose preference decided ("" for the path as
// sent); none says why no preference is known at all ("" when a
// robots.txt was read).
func applyUsage(v *Verdict, p UsagePolicy, via *[aipref.NumPurposes]string, none string) {
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
	if blocked == 0 {
		return
	}
	uv := v.Usage[first]
	v.Allowed, v.Reason, v.UsageBlocked = false, ReasonUsageDisallowed, blocked
	v.Rule, v.Line = uv.Rule, uv.Line
	v.Detail = usageDetail(v, blocked, none)
	if w := via[first]; w != "" {
		v.Detail += "; decided on " + w
	}
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
			d += "purpose " + q.String() + ": usage preference unknown" + none + " and usage.unknown is deny"
		}
	}
	return d
}
