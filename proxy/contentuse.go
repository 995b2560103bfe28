package proxy

import (
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// The content-use fields of a decision (Content Signals "use="), as
// answers and audit records show them: the declared content use, the
// site's level and whether it refused the URL.

// contentUseJSON holds the content-use fields of decisionJSON and
// refusalBody.
type contentUseJSON struct {
	// ContentUse is the declared content use (content_use); SiteUse the
	// level the site states for the URL (robots.txt, or the response);
	// ContentUseDisallowed is set when SiteUse is below ContentUse.
	ContentUse           string       `json:"content_use,omitempty"`
	SiteUse              *siteUseJSON `json:"site_use,omitempty"`
	ContentUseDisallowed bool         `json:"content_use_disallowed,omitempty"`
}

// siteUseJSON is a site's content-use level with where it is stated.
type siteUseJSON struct {
	Level  string `json:"level"`            // immediate, reference or full
	Source string `json:"source,omitempty"` // content-signal, content-signal-header
	Rule   string `json:"rule,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// contentUseOf returns the content-use fields of d.
func contentUseOf(d *enforce.Decision) contentUseJSON {
	j := contentUseJSON{ContentUse: d.ContentUse.String(), ContentUseDisallowed: d.ContentUseBlocked}
	if su := d.SiteUse; su.Level != 0 {
		j.SiteUse = &siteUseJSON{Level: su.Level.String(), Source: enforce.SourceName(su.Source), Rule: su.Rule, Line: su.Line}
	}
	return j
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
func contentUseText(sb *strings.Builder, j contentUseJSON) {
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
