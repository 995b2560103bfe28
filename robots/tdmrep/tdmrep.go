// Package tdmrep reads the W3C TDM Reservation Protocol (TDMRep,
// Community Group Final Report, 10 May 2024): the site-wide file
// /.well-known/tdmrep.json, the tdm-reservation and tdm-policy response
// header fields and the HTML meta elements of the same names, and
// combines them in the protocol's order of precedence. It is pure: no
// network, clock or logging.
package tdmrep

import "strings"

// WellKnownPath is the path of the site-wide TDMRep file.
const WellKnownPath = "/.well-known/tdmrep.json"

// Reservation is a tdm-reservation value.
type Reservation int8

const (
	// Unset: nothing declared, or a protocol error (a value other than 1
	// or 0), which the protocol says to read as unset.
	Unset Reservation = iota
	// NotReserved: tdm-reservation 0, TDM rights are not reserved.
	NotReserved
	// Reserved: tdm-reservation 1, TDM rights are reserved (the opt-out
	// of Article 4 of the EU DSM directive).
	Reserved
)

// String returns "1", "0" or "unset".
func (r Reservation) String() string {
	switch r {
	case Reserved:
		return "1"
	case NotReserved:
		return "0"
	}
	return "unset"
}

// Source is where a TDMRep value was declared.
type Source uint8

const (
	SourceNone   Source = iota // nothing declared
	SourceFile                 // /.well-known/tdmrep.json
	SourceHeader               // tdm-reservation / tdm-policy response header fields
	SourceMeta                 // <meta name="tdm-reservation|tdm-policy"> in an HTML head
)

// String names s in answers and audit records.
func (s Source) String() string {
	switch s {
	case SourceFile:
		return "tdmrep.json"
	case SourceHeader:
		return "header"
	case SourceMeta:
		return "meta"
	}
	return ""
}

// Verdict is what TDMRep says about one resource.
type Verdict struct {
	Reservation Reservation
	// Source is where Reservation was declared ([SourceNone] when Unset by
	// absence).
	Source Source
	// Policy is the tdm-policy URL in force; "" when none, and always ""
	// when Reservation is not Reserved (the protocol says not to process
	// a policy of an unreserved resource).
	Policy string
	// Rule quotes the declaration, e.g. `rule 2: "location": "/b/"` or
	// "tdm-reservation: 1".
	Rule string
}

// Reserved reports whether v reserves TDM rights.
func (v Verdict) Reserved() bool { return v.Reservation == Reserved }

// ParseValue reads one tdm-reservation value: after trimming ASCII
// white space, "1" is Reserved, "0" [NotReserved], and anything else
// (a protocol error) Unset.
func ParseValue(s string) Reservation {
	switch strings.Trim(s, " \t\r\n\f") {
	case "1":
		return Reserved
	case "0":
		return NotReserved
	}
	return Unset
}

// ParseHeader returns the declaration of a response's tdm-reservation
// field values and tdm-policy field values. Several values (several
// fields, or one field with a comma-separated list) are read as each
// element alone: one 1 makes the resource Reserved, else one 0 makes it
// [NotReserved], else it is Unset. The policy is the first non-empty
// tdm-policy element, kept only when the result is Reserved. ok is
// false when no tdm-reservation field has a valid value (the header
// declares nothing, and the file's value stands).
func ParseHeader(reservation, policy []string) (v Verdict, ok bool) {
	var got Reservation
	for _, f := range reservation {
		for _, el := range strings.Split(f, ",") {
			if r := ParseValue(el); r > got {
				got = r
			}
		}
	}
	if got == Unset {
		return Verdict{}, false
	}
	v = Verdict{Reservation: got, Source: SourceHeader, Rule: "tdm-reservation: " + got.String()}
	if got == Reserved {
		v.Policy = firstPolicy(policy)
	}
	return v, true
}

// ParseMeta returns the declaration of an HTML head's <meta
// name="tdm-reservation"> content (reservation, hasRes: whether the
// element is present) and <meta name="tdm-policy"> content. A content
// other than 1 or 0 declares nothing.
func ParseMeta(reservation string, hasRes bool, policy string) (v Verdict, ok bool) {
	if !hasRes {
		return Verdict{}, false
	}
	got := ParseValue(reservation)
	if got == Unset {
		return Verdict{}, false
	}
	v = Verdict{Reservation: got, Source: SourceMeta, Rule: `meta tdm-reservation="` + got.String() + `"`}
	if got == Reserved {
		v.Policy = firstPolicy([]string{policy})
	}
	return v, true
}

// firstPolicy returns the first non-empty comma-separated element of vs,
// trimmed; "" when none.
func firstPolicy(vs []string) string {
	for _, f := range vs {
		for _, el := range strings.Split(f, ",") {
			if el = strings.TrimSpace(el); el != "" {
				return el
			}
		}
	}
	return ""
}

// Supersede returns the verdict in force after a later step of the
// protocol's precedence (file, then header, then HTML meta) declared
// next (ok: it declared a valid tdm-reservation): the later value
// supersedes the earlier; absence never resets a value found earlier.
// A later step that declares the same reservation without a policy
// keeps the earlier policy.
func Supersede(prev, next Verdict, ok bool) Verdict {
	if !ok {
		return prev
	}
	if next.Reservation == Reserved && next.Policy == "" && prev.Reservation == Reserved {
		next.Policy = prev.Policy
	}
	return next
}
