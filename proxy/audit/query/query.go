// Package query reads robotsgate's audit log back: the live file and its
// rotated siblings (Files, Open), filtered (Filter) by a scan that
// rejects most lines by their bytes alone and decodes only the fields a
// query needs (Scanner), and followed as it grows (Follow).
package query

import (
	"bytes"
	"fmt"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// Filter selects audit records. A zero field selects every record.
type Filter struct {
	// Origin is an origin ("https://example.com:8443"), any URL of it, or
	// a host with an optional port ("example.com", "[::1]:8080"), which
	// matches it under both http and https ([enforce.OriginsOf], as the
	// admin API reads one). Either is compared in the canonical form of
	// [enforce.Origin], in which records name origins.
	Origin string
	// Since and Until bound the record's time: Since <= time < Until.
	Since, Until time.Time
	// Reasons and Decisions select records whose reason (decision) is
	// one of them.
	Reasons, Decisions []string
	// Agent selects records decided for this agent, compared
	// case-insensitively as product tokens are.
	Agent string
	// URLPrefix selects records whose URL starts with it.
	URLPrefix string
	// User selects records of requests sent by this proxy user (the
	// record's "user", compared exactly).
	User string
	// Kinds selects records of these kinds: [KindRequest] for the
	// decisions on requests (records without a kind), or a record kind
	// ("config-reload").
	Kinds []string
}

// KindRequest selects, in [Filter.Kinds], the records of decisions on
// requests: those without a "kind".
const KindRequest = "request"

// matcher is a compiled Filter.
type matcher struct {
	f Filter
	// origins are the canonical origins to match (two for a host).
	origins []string
	// needles are byte strings a matching line contains when it holds
	// no escape: each group needs one of its alternatives.
	needles [][][]byte
	timed   bool
	// sinceKey and untilKey are Since and Until in UTC to the second,
	// as records write times ("2006-01-02T15:04:05"), for timeKnown.
	sinceKey, untilKey string
}

// compile checks f and prepares its matching.
func compile(f Filter) (*matcher, error) {
	m := &matcher{f: f, timed: !f.Since.IsZero() || !f.Until.IsZero()}
	if !f.Since.IsZero() {
		m.sinceKey = f.Since.UTC().Format(secondsLayout)
	}
	if !f.Until.IsZero() {
		m.untilKey = f.Until.UTC().Format(secondsLayout)
	}
	if f.Origin != "" {
		if err := m.compileOrigin(f.Origin); err != nil {
			return nil, err
		}
	}
	m.addNeedles(f.Reasons, `"`, `"`)
	m.addNeedles(f.Decisions, `"`, `"`)
	if f.URLPrefix != "" {
		m.addNeedles([]string{f.URLPrefix}, `"`, "")
	}
	return m, nil
}

// compileOrigin canonicalises o as [enforce.OriginsOf] reads it: a host
// names its origin under http and under https.
func (m *matcher) compileOrigin(o string) error {
	origins, err := enforce.OriginsOf(o)
	if err != nil {
		return err
	}
	m.origins = origins
	m.addNeedles(m.origins, `"`, `"`)
	return nil
}

// addNeedles adds one group: any of vals between prefix and suffix.
func (m *matcher) addNeedles(vals []string, prefix, suffix string) {
	if len(vals) == 0 {
		return
	}
	var g [][]byte
	for _, v := range vals {
		g = append(g, []byte(prefix+v+suffix))
	}
	m.needles = append(m.needles, g)
}

// mayMatch reports whether line can match: false only when it holds no
// escape (which could spell a needle otherwise) and lacks a needle.
func (m *matcher) mayMatch(line []byte) bool {
	if len(m.needles) == 0 || bytes.IndexByte(line, '\\') >= 0 {
		return true
	}
	for _, g := range m.needles {
		found := false
		for _, n := range g {
			if bytes.Contains(line, n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// match reports whether the record raw matches; an error says a field
// it reads has the wrong type or its time cannot be read.
func (m *matcher) match(raw *rawFields) (bool, error) {
	for _, c := range [...]struct {
		fd  field
		set []string
	}{{fOrigin, m.origins}, {fReason, m.f.Reasons}, {fDecision, m.f.Decisions}} {
		if len(c.set) == 0 {
			continue
		}
		v, err := raw.text(c.fd)
		if err != nil || !oneOf(v, c.set) {
			return false, err
		}
	}
	if len(m.f.Kinds) > 0 {
		v, err := raw.text(fKind)
		if len(v) == 0 {
			v = []byte(KindRequest)
		}
		if err != nil || !oneOf(v, m.f.Kinds) {
			return false, err
		}
	}
	if m.f.Agent != "" {
		v, err := raw.text(fAgent)
		if err != nil || !bytes.EqualFold(v, []byte(m.f.Agent)) {
			return false, err
		}
	}
	if m.f.User != "" {
		v, err := raw.text(fUser)
		if err != nil || string(v) != m.f.User {
			return false, err
		}
	}
	if m.f.URLPrefix != "" {
		v, err := raw.text(fURL)
		if err != nil || !bytes.HasPrefix(v, []byte(m.f.URLPrefix)) {
			return false, err
		}
	}
	if !m.timed {
		return true, nil
	}
	v, err := raw.text(fTime)
	if err != nil {
		return false, err
	}
	return m.inTime(v)
}

// inTime reports whether the record time t is within Since and Until.
func (m *matcher) inTime(t []byte) (bool, error) {
	if in, known := m.timeKnown(t); known {
		return in, nil
	}
	pt, err := time.Parse(time.RFC3339Nano, string(t))
	if err != nil {
		return false, fmt.Errorf("%w: time %q", errMalformed, t)
	}
	return (m.f.Since.IsZero() || !pt.Before(m.f.Since)) && (m.f.Until.IsZero() || pt.Before(m.f.Until)), nil
}

// timePrefix is how robotsgate starts every record.
var timePrefix = []byte(`{"time":"`)

// outOfTime reports whether line, which starts as robotsgate writes
// records, has a time outside Since and Until, read from its bytes alone.
func (m *matcher) outOfTime(line []byte) bool {
	if !m.timed || !bytes.HasPrefix(line, timePrefix) {
		return false
	}
	rest := line[len(timePrefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return false
	}
	in, known := m.timeKnown(rest[:end])
	return known && !in
}

func oneOf(v []byte, set []string) bool {
	for _, s := range set {
		if string(v) == s {
			return true
		}
	}
	return false
}

// secondsLayout is an RFC 3339 time in UTC to the second, without its
// "Z": the first 19 bytes of every time robotsgate writes.
const secondsLayout = "2006-01-02T15:04:05"

// timeKnown decides Since <= t < Until by comparing bytes, when t is a
// UTC time as robotsgate writes it ("2006-01-02T15:04:05[.frac]Z") whose
// second differs from the bounds' seconds: known is false otherwise (t is
// then parsed).
func (m *matcher) timeKnown(t []byte) (in, known bool) {
	if !utcLayout(t) {
		return false, false
	}
	sec := string(t[:len(secondsLayout)]) // compared without allocating
	if m.sinceKey != "" {
		switch {
		case sec < m.sinceKey:
			return false, true
		case sec == m.sinceKey:
			return false, false
		}
	}
	if m.untilKey != "" {
		switch {
		case sec > m.untilKey:
			return false, true
		case sec == m.untilKey:
			return false, false
		}
	}
	return true, true
}

// utcLayout reports whether t has the shape "dddd-dd-ddTdd:dd:dd" then
// "Z" or "." digits "Z".
func utcLayout(t []byte) bool {
	n := len(secondsLayout)
	if len(t) < n+1 || t[len(t)-1] != 'Z' || (t[n] != 'Z' && t[n] != '.') {
		return false
	}
	for i := 0; i < len(t)-1; i++ {
		c := t[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		case n:
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}
