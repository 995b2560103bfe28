package robots

import (
	"net/url"
	"strings"
)

// License lines (RSL 1.0, "Really Simple Licensing"): `License: URL`
// names an RSL license document that states the terms under which the
// site's content may be used. A License line is recorded with the group
// it sits in (RFC 9309 grouping: every line after a user-agent line
// belongs to that group); lines before the first user-agent line are
// global. Like the usage lines, a License line never ends a run of
// user-agent lines, so Allow/Disallow verdicts never move because of one.

// licenseLine is one valid License line: its URL and the index into
// [Robots.written] of its group, or -1 when it is global (before the first
// user-agent line) and -2 when its group names no agent.
type licenseLine struct {
	url   string
	group int32
}

// maxLicenseLines is how many License lines a file keeps; a file with
// more is marked (see [Robots.Licenses]).
const maxLicenseLines = 64

// Group markers of a [licenseLine].
const (
	licenseGlobal  = -1
	licenseNoAgent = -2
)

// licenseLine records the License line value of the current group (or
// as global); an invalid value (not an absolute http or https URL) is
// ignored. src holds the index into p.src until [parser.licenseGroups]
// maps it to [Robots.written].
func (p *parser) licenseLine(value []byte) {
	u, ok := licenseURL(p.str(value))
	if !ok {
		return
	}
	if len(p.r.licenses) == maxLicenseLines {
		p.r.licensesCut = true
		return
	}
	p.r.licenses = append(p.r.licenses, licenseLine{url: u, group: int32(len(p.src)) - 1})
}

// licenseGroups maps the group index of each License line from p.src to
// [Robots.written]; called once the parts are built.
func (p *parser) licenseGroups() {
	for i := range p.r.licenses {
		l := &p.r.licenses[i]
		if l.group < 0 {
			continue
		}
		g := &p.src[l.group]
		if from, to := g.agentRange(); from == to {
			l.group = licenseNoAgent
			continue
		}
		l.group = int32(g.written)
	}
}

// licenseURL returns the value of a License line as an absolute http or
// https URL without its fragment, and whether it is one: relative
// references, other schemes, URLs without a host or with userinfo are
// not license URLs.
func licenseURL(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.ContainsAny(v, " \t\x00") {
		return "", false
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	s := strings.ToLower(u.Scheme)
	if s != "http" && s != "https" {
		return "", false
	}
	u.Scheme, u.Fragment, u.RawFragment = s, "", ""
	return u.String(), true
}

// Licenses returns the URLs of the License lines that bind the crawler
// whose product token is agent, without duplicates, in file order:
//
//   - when the group that applies to agent ([Robots.Group]) has License
//     lines, those and the global ones (before the first user-agent
//     line);
//   - otherwise every License line of the file.
//
// RSL 1.0 is read so that rights are never expanded where its text is
// not confirmed: a group's own lines do not silence the global ones
// (both are evaluated, and the most restrictive terms win), and a
// License line in another group binds a crawler whose group states none,
// since the protocol's guide calls License global and a line between
// groups may have been meant so. License lines never change what
// Allow/Disallow decide.
//
// complete is false when the file has more License lines than robots
// keeps (64): the terms of the others are not known.
func (r *Robots) Licenses(agent string) (urls []string, complete bool) {
	if r == nil || len(r.licenses) == 0 {
		return nil, true
	}
	m, _ := r.lookup(agent)
	own := false
	if m != nil {
		for _, l := range r.licenses {
			if l.group >= 0 && r.inGroup(m, uint32(l.group)) {
				own = true
				break
			}
		}
	}
	var out []string
	for _, l := range r.licenses {
		if own && l.group != licenseGlobal && !r.inGroup(m, uint32(l.group)) {
			continue
		}
		if !containsString(out, l.url) {
			out = append(out, l.url)
		}
	}
	return out, !r.licensesCut
}

// inGroup reports whether the group as written w is a part of m.
func (r *Robots) inGroup(m *merged, w uint32) bool {
	for _, p := range r.parts(m) {
		if p == w {
			return true
		}
	}
	return false
}

// containsString reports whether s holds v.
func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
