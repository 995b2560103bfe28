package answer

import (
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// The content-use fields of a decision (Content Signals "use="), as
// answers and audit records show them: the declared content use, the
// site's level and whether it refused the URL.

// contentUseOf returns the content-use fields of d.
func contentUseOf(d *enforce.Decision) enforce.ContentUseShown {
	return enforce.ShowContentUse(d.ContentUse, d.SiteUse, d.ContentUseBlocked)
}

// auditContentUse sets the content-use fields of e from d.
func auditContentUse(e *audit.Event, d *enforce.Decision) {
	j := contentUseOf(d)
	e.ContentUse, e.ContentUseDisallowed = j.ContentUse, j.ContentUseDisallowed
	if su := j.SiteUse; su != nil {
		e.SiteUse = &audit.SiteUse{Level: su.Level, Source: su.Source, Rule: su.Rule, Line: su.Line}
	}
}

// contentUseText writes the content-use line of a plain-text refusal,
// e.g. "use:      full declared; site reference (Content-Signal:
// use=reference, line 2)"; nothing when neither is known.
func contentUseText(sb *strings.Builder, j enforce.ContentUseShown) {
	if j.ContentUse == "" && j.SiteUse == nil {
		return
	}
	sb.WriteString("use:      ")
	if j.ContentUse != "" {
		sb.WriteString(j.ContentUse + " declared; ")
	}
	if su := j.SiteUse; su != nil {
		sb.WriteString("site " + su.Level + " (" + su.Rule)
		if su.Line > 0 {
			sb.WriteString(", line " + strconv.Itoa(su.Line))
		}
		sb.WriteString(")")
	} else {
		sb.WriteString("site states none")
	}
	sb.WriteString("\n")
}
