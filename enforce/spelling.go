package enforce

import (
	"strings"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// An origin does not always read a request's path as it was sent: servers
// resolve dot segments and merge slashes, decode %2F and other escapes
// before routing, drop path parameters (";jsessionid=1", in every segment,
// also an empty one: "/;x/private" is "/private" to Tomcat and Jetty) and
// read a backslash, raw or as %5C, as a slash (IIS). A robots.txt rule
// names the path the site owner means, so Decide also decides the other
// spellings below and refuses when any of them is disallowed.

// spelled is the verdict of a path and its other spellings.
type spelled struct {
	v      robots.Match
	detail string // names the spelling that disallowed; "" when none did
	usage  Usage  // the most restrictive usage of the spellings; zero when disallowed
	// via names, per purpose, the spelling whose usage verdict was
	// taken; "" for the path as sent.
	via [aipref.NumPurposes]string
	// use is the lowest content-use level of the spellings, and useVia
	// the spelling that stated it ("" for the path as sent).
	use    robots.UseVerdict
	useVia string
}

// decideSpellings decides path (and query, as sent) for agent, and when
// that allows, its other spellings (see spellings) in turn: the first
// that disallows decides, and detail then names it. A spelling of a
// disallowed path thus cannot slip through. For a path every spelling
// allows, the usage of each purpose is the most restrictive of the
// spellings' (see RulesVerdict).
func decideSpellings(rules *robots.Robots, agent, path string) (s spelled) {
	v, u := rules.MatchUsageRules(agent, path)
	s.v = v
	if !v.Allowed {
		return s
	}
	s.usage, s.use = heldUsage(&u), u.Use()
	if !needsSpellings(path) {
		return s
	}
	for _, sp := range spellings(path) {
		sv, su := rules.MatchUsageRules(agent, sp.path)
		if !sv.Allowed {
			return spelled{v: sv, detail: "decided on the normalised path " + shown(sp.path) + " (" + sp.how + ")"}
		}
		held := heldUsage(&su)
		for q := range s.usage {
			if w := held[q]; restrictiveness(w.Pref) > restrictiveness(s.usage[q].Pref) {
				s.usage[q] = w
				s.via[q] = "the normalised path " + shown(sp.path) + " (" + sp.how + ")"
			}
		}
		if w := su.Use(); aipref.CombineUse(s.use.Level, w.Level) != s.use.Level {
			s.use, s.useVia = w, "the normalised path "+shown(sp.path)+" ("+sp.how+")"
		}
	}
	return s
}

// spelling is another spelling of a request's path and query, with how it
// was derived.
type spelling struct {
	path, how string
}

// needsSpellings reports whether p (path and query, as sent) may have a
// spelling other than its own: it holds, before any '?', repeated slashes,
// a segment starting with '.', a ';' or a '\', or anywhere an escape of
// '.', '\' or a reserved character other than '*' and '$' (robots already
// reads "%2A" and "%24" as '*' and '$'). Ordinary paths take one pass and
// no allocation.
func needsSpellings(p string) bool {
	query := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '?':
			query = true
		case '/':
			if !query && i+1 < len(p) && p[i+1] == '/' {
				return true
			}
		case '.':
			if !query && (i == 0 || p[i-1] == '/') {
				return true
			}
		case ';', '\\':
			if !query {
				return true
			}
		case '%':
			if i+2 < len(p) && isHexDigit(p[i+1]) && isHexDigit(p[i+2]) &&
				strings.IndexByte(spelledEscapes, unhexByte(p[i+1])<<4|unhexByte(p[i+2])) >= 0 {
				return true
			}
		}
	}
	return false
}

// spelledEscapes are the octets whose escapes give p another spelling:
// '.', '\' and the reserved characters other than '*' and '$'.
const spelledEscapes = ".\\:/?#[]@!&'()+,;="

// spellings returns the spellings of p (path and query, as sent) other
// than p, without repeats, in the order Decide tries them:
//
//   - cleaned: %2E and %2F decoded, dot segments removed (a segment is "."
//     or ".." also with ";params"), repeated slashes merged;
//   - resolved: path parameters dropped, every escape decoded (but %25),
//     backslashes read as slashes, parameters dropped again (those that
//     were escaped), dot segments removed and slashes merged; the query
//     decoded;
//   - decoded: every escape of path and query decoded but %25, which
//     stays, so that no octet is decoded twice;
//   - parameters dropped: ";..." removed from every segment;
//   - backslashes as slashes: '\' and %5C read as '/'.
//
// Only the path (before the first '?') is resolved; a p that does not
// start with '/' has only its decoded spelling.
func spellings(p string) []spelling {
	path, query := splitQuery(p)
	var out []spelling
	add := func(s, how string) {
		if s == p {
			return
		}
		for _, o := range out {
			if o.path == s {
				return
			}
		}
		out = append(out, spelling{s, how})
	}
	if strings.HasPrefix(path, "/") {
		add(cleanPath(p), "dot segments resolved, repeated slashes merged, as origins do")
		r := dropParams(decodeEscapes(dropParams(path)))
		r = removeDots(strings.ReplaceAll(r, `\`, "/"))
		add(r+decodeEscapes(query), "path parameters dropped, escapes decoded, backslashes read as slashes, "+
			"dot segments resolved, as origins may do")
	}
	add(decodeEscapes(p), "escapes decoded, as origins may do")
	if strings.HasPrefix(path, "/") {
		add(dropParams(path)+query, "path parameters dropped, as Tomcat and Jetty do")
		add(slashBackslashes(path)+query, "backslashes read as slashes, as IIS does")
	}
	return out
}

// splitQuery splits p at its first '?'; query keeps the '?'.
func splitQuery(p string) (path, query string) {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhexByte(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// decodeEscapes returns s with every escape %XX decoded, except %25,
// which stays as it is: the '%' of the result starts an escape only where
// s held one of a literal '%'.
func decodeEscapes(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			if c := unhexByte(s[i+1])<<4 | unhexByte(s[i+2]); c != '%' {
				b = append(b, c)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// dropParams returns path with the parameters (from ';' to the end of the
// segment) of every segment removed.
func dropParams(path string) string {
	if strings.IndexByte(path, ';') < 0 {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		if path[i] == ';' {
			for i+1 < len(path) && path[i+1] != '/' {
				i++
			}
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// slashBackslashes returns path with '\' and %5C (any case) as '/'.
func slashBackslashes(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\':
			b.WriteByte('/')
		case path[i] == '%' && i+2 < len(path) && path[i+1] == '5' && path[i+2]|0x20 == 'c':
			b.WriteByte('/')
			i += 2
		default:
			b.WriteByte(path[i])
		}
	}
	return b.String()
}

// cleanPath returns the path (and query) p as an origin may resolve it:
// %2e and %2f (any case) decoded to '.' and '/', then the dot segments
// removed and empty segments dropped (removeDots). The query is kept as
// is. A p that does not start with '/' is returned unchanged.
func cleanPath(p string) string {
	path, query := splitQuery(p)
	if !strings.HasPrefix(path, "/") {
		return p
	}
	buf := make([]byte, 0, len(path))
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && i+2 < len(path) && path[i+1] == '2' {
			switch path[i+2] | 0x20 {
			case 'e':
				buf = append(buf, '.')
				i += 2
				continue
			case 'f':
				buf = append(buf, '/')
				i += 2
				continue
			}
		}
		buf = append(buf, path[i])
	}
	return removeDots(string(buf)) + query
}

// removeDots removes the dot segments of path (starting with '/') as RFC
// 3986 §5.2.4 does (a segment counts as "." or ".." also with ";params",
// as some servers strip them first) and drops empty segments (repeated
// slashes).
func removeDots(path string) string {
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	trailing := false
	for i, s := range segs {
		last := i == len(segs)-1
		name := s
		if j := strings.IndexByte(s, ';'); j >= 0 {
			name = s[:j]
		}
		switch {
		case name == ".":
			trailing = last
		case name == "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			trailing = last
		case s == "":
			trailing = last
		default:
			out = append(out, s)
			trailing = false
		}
	}
	var b strings.Builder
	b.Grow(len(path))
	for _, s := range out {
		b.WriteByte('/')
		b.WriteString(s)
	}
	if trailing || len(out) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// shown returns s for a Detail: octets other than printable ASCII are
// percent-encoded, so that a decoded spelling cannot carry a control
// character or a line break into a log or a response body.
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			var b strings.Builder
			for j := 0; j < len(s); j++ {
				if c := s[j]; c < 0x21 || c > 0x7E {
					b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
				} else {
					b.WriteByte(c)
				}
			}
			return b.String()
		}
	}
	return s
}
