package answer

import (
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// The signals a decision may carry beside robots.txt (W3C TDMRep, an RSL
// license, usage preferences), as answers and audit records show them.

// tdmJSON is a TDMRep verdict as answers show it.
type tdmJSON struct {
	Reservation string `json:"reservation"` // 1, 0, unset or unknown
	Source      string `json:"source,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Policy      string `json:"policy,omitempty"` // the tdm-policy URL
	File        string `json:"file,omitempty"`   // the tdmrep.json consulted
	FileStatus  string `json:"file_status,omitempty"`
	FileNote    string `json:"file_note,omitempty"`
}

// tdmOf is d's TDMRep verdict to show, nil when TDMRep was not consulted.
func tdmOf(d *enforce.Decision) *tdmJSON {
	v := &d.TDM
	if !v.Checked {
		return nil
	}
	j := &tdmJSON{Reservation: v.Reservation.String(), Source: v.Source.String(), Rule: v.Rule, Policy: v.Policy,
		File: v.FileURL, FileStatus: string(v.FileStatus), FileNote: v.FileNote}
	if v.Unknown && v.Source == tdmrep.SourceNone {
		j.Reservation = "unknown"
	}
	return j
}

// auditTDM is tdmOf(d) for an audit record.
func auditTDM(d *enforce.Decision) *audit.TDM {
	j := tdmOf(d)
	if j == nil {
		return nil
	}
	file := j.File
	if j.FileStatus != "" {
		file += " (" + j.FileStatus
		if j.FileNote != "" {
			file += ": " + j.FileNote
		}
		file += ")"
	}
	return &audit.TDM{Reservation: j.Reservation, Source: j.Source, Rule: j.Rule, Policy: j.Policy, File: file}
}

// tdmText writes the TDMRep lines of a plain-text refusal.
func tdmText(sb *strings.Builder, j *tdmJSON) {
	if j == nil {
		return
	}
	sb.WriteString("tdm:      reservation " + j.Reservation)
	if j.Source != "" {
		sb.WriteString(" (" + j.Source + ")")
	}
	sb.WriteString("\n")
	if j.Policy != "" {
		sb.WriteString("tdm-policy: " + j.Policy + "\n")
	}
	if j.File != "" {
		sb.WriteString("tdmrep:   " + j.File)
		if j.FileStatus != "" {
			sb.WriteString(": " + j.FileStatus)
		}
		sb.WriteString("\n")
	}
}

// licenseJSON is a license verdict as answers show it; it never holds a
// token.
type licenseJSON struct {
	State    string   `json:"state"` // none, permitted, required, prohibited, unknown
	Use      string   `json:"use,omitempty"`
	License  string   `json:"license,omitempty"`
	Content  string   `json:"content,omitempty"`
	Server   string   `json:"server,omitempty"`
	Payment  string   `json:"payment,omitempty"`
	Token    string   `json:"token,omitempty"`
	Note     string   `json:"note,omitempty"`
	Licenses []string `json:"licenses,omitempty"`
}

// licenseOf is d's license verdict to show, nil when licenses were not
// consulted.
func licenseOf(d *enforce.Decision) *licenseJSON {
	v := &d.License
	if !v.Checked {
		return nil
	}
	return &licenseJSON{State: LicenseState(*v), Use: v.Use, License: v.License, Content: v.Content, Server: v.TokenServer,
		Payment: v.Payment, Token: v.Token, Note: v.Note, Licenses: v.Licenses}
}

// auditLicense is licenseOf(d) for an audit record.
func auditLicense(d *enforce.Decision) *audit.License {
	j := licenseOf(d)
	if j == nil {
		return nil
	}
	return &audit.License{State: j.State, Use: j.Use, License: j.License, Content: j.Content, Server: j.Server, Token: j.Token, Note: j.Note}
}

// licenseText writes the license line of a plain-text refusal.
func licenseText(sb *strings.Builder, j *licenseJSON) {
	if j == nil {
		return
	}
	sb.WriteString("license:  " + j.State)
	if j.Use != "" {
		sb.WriteString(" (" + j.Use + ")")
	}
	if j.License != "" {
		sb.WriteString(" by " + j.License)
	}
	sb.WriteString("\n")
}

// usageOf returns the usage preferences of d to show
// ([enforce.Usage.Shown]): every purpose with a stated preference, and
// every declared purpose of a URL Allow/Disallow permits.
func usageOf(d *enforce.Decision) map[string]enforce.PurposeUsage {
	permitted := d.Reason != enforce.ReasonDisallowed && d.Reason != enforce.ReasonRobotsUnreachable
	return d.Usage.Shown(d.Purposes, permitted)
}

// auditUsage converts usageOf(d) for an audit record.
func auditUsage(d *enforce.Decision) []audit.Usage {
	var out []audit.Usage
	m := usageOf(d)
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		if u, ok := m[p.String()]; ok {
			out = append(out, audit.Usage{Purpose: p.String(), Pref: u.Pref, Source: u.Source, Rule: u.Rule, Line: u.Line})
		}
	}
	return out
}

// usageText writes the purposes and usage lines of a plain-text refusal,
// e.g. "usage:    train-ai disallowed (Content-Usage: train-ai=n, line 4)".
func usageText(sb *strings.Builder, purposes []string, usage map[string]enforce.PurposeUsage) {
	if len(purposes) > 0 {
		sb.WriteString("purposes: " + strings.Join(purposes, ", ") + "\n")
	}
	for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
		u, ok := usage[p.String()]
		if !ok {
			continue
		}
		sb.WriteString("usage:    " + p.String() + " " + u.Pref)
		if u.Rule != "" {
			sb.WriteString(" (" + u.Rule)
			if u.Line > 0 {
				sb.WriteString(", line " + strconv.Itoa(u.Line))
			}
			if u.Line == 0 && u.Source != "" {
				sb.WriteString(", " + u.Source)
			}
			sb.WriteString(")")
		}
		sb.WriteString("\n")
	}
}

// LicenseState is v's state as answers show it: unknown when a document
// could not be read and none prohibits.
func LicenseState(v enforce.LicenseVerdict) string {
	if v.Unknown && v.State != rsl.Prohibited {
		return "unknown"
	}
	return v.State.String()
}
