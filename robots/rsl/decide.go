package rsl

import (
	"net/url"
	"strings"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// Uses is a set of RSL usage tokens (the usage vocabulary of RSL 1.0).
type Uses uint8

// The usage tokens. [UseAll] covers every use, [UseAIAll] every AI use
// (ai-train, ai-input, ai-index).
const (
	UseAll Uses = 1 << iota
	UseAIAll
	UseAITrain
	UseAIInput
	UseAIIndex
	UseSearch
)

// useNames are the tokens of the bits of Uses, lowest first.
var useNames = [...]string{"all", "ai-all", "ai-train", "ai-input", "ai-index", "search"}

// parseUses reads a usage list: tokens separated by white space (RSL
// 1.0) or commas (RSL 0.9). It returns the known tokens and the others.
func parseUses(s string) (u Uses, unknown []string) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		known := false
		for i, n := range useNames {
			if f == n {
				u |= 1 << i
				known = true
				break
			}
		}
		if !known && len(unknown) < 8 {
			unknown = append(unknown, f)
		}
	}
	return u, unknown
}

// String lists the tokens of u, separated by spaces.
func (u Uses) String() string {
	var parts []string
	for i, n := range useNames {
		if u&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, " ")
}

// covers reports whether the list u names the single use x, itself or
// through all / ai-all.
func (u Uses) covers(x Uses) bool {
	switch {
	case u&x != 0, u&UseAll != 0:
		return true
	case u&UseAIAll != 0:
		return x&(UseAITrain|UseAIInput|UseAIIndex|UseAIAll) != 0
	}
	return false
}

// grants reports whether the license l lets the use x happen.
func (l *License) grants(x Uses) bool {
	return !l.Prohibits.covers(x) && (!l.HasPermits || l.Permits.covers(x))
}

// State is what a document says about one URL for a set of uses.
type State uint8

const (
	// None: no <content> of the document covers the URL.
	None State = iota
	// Permitted: every covering <content> has a free license that
	// grants every use, and names no License Server.
	Permitted
	// Required: every use is granted, but a license token is needed: a
	// covering <content> names a License Server, or grants a use only
	// under a paid license.
	Required
	// Prohibited: a covering <content> grants a use under none of its
	// licenses (prohibited, or not among those it permits).
	Prohibited
)

// String returns "none", "permitted", "required" or "prohibited".
func (s State) String() string {
	return [...]string{"none", "permitted", "required", "prohibited"}[s]
}

// Verdict is what a document says about one URL for a set of uses.
type Verdict struct {
	State State
	// Use is the usage token that decided (the first prohibited, else the
	// first needing a token), "" for None and Permitted.
	Use string
	// Content is the url attribute of the <content> that decided.
	Content string
	// Server is the License Server a Required verdict needs a token of,
	// "" when the content names none (a paid license without a server).
	Server string
	// Payment is the payment type of a Required verdict's license.
	Payment string
	// Conditions are terms of the covering licenses robotsgate does not
	// evaluate (user classes, regions).
	Conditions []string
}

// Decide returns what d says about the URL of origin (scheme://host[:port]
// in the spelling of [Content.Origin]) and path (path and query, as sent)
// for every use in uses. Every <content> that covers the URL binds (the
// most restrictive combination wins, so a narrower <content> never
// widens what a broader one grants); within one <content>, a use is
// granted when one of its licenses grants it. The url patterns are
// matched all at once, as a robots.txt decision matches a group's rules
// ([robots.FirstMatch]): the cost is bounded whatever the patterns.
func (d *Document) Decide(origin, path string, uses Uses) Verdict {
	v, _ := d.decideWork(origin, path, uses)
	return v
}

// decideWork is Decide with the count of the matching work it did (see
// [robots.FirstMatch.AllWork]), for tests of its bound.
func (d *Document) decideWork(origin, path string, uses Uses) (Verdict, int) {
	var buf [16]int
	covering, work := d.covering(path, buf[:0])
	return d.decideContents(covering, origin, uses), work
}

// DecideAll returns what d says about every URL of origin alike for
// uses: the verdict of the contents whose url pattern matches every path
// ("/", "/*", "*"; [robots.FirstMatch.MatchesEvery]), bound to origin or
// to no origin. Since every covering content binds, each URL of the site
// is at least as restricted as this verdict says (a narrower content can
// only restrict it further); None when no content covers the whole site.
func (d *Document) DecideAll(origin string, uses Uses) Verdict {
	var every []int
	for i := range d.Contents {
		if d.match.MatchesEvery(i) {
			every = append(every, i)
		}
	}
	return d.decideContents(every, origin, uses)
}

// decideContents is the verdict of the contents of d numbered covering
// (in document order) on origin for uses: the most restrictive.
func (d *Document) decideContents(covering []int, origin string, uses Uses) Verdict {
	var v Verdict
	for _, i := range covering {
		c := &d.Contents[i]
		if c.Origin != "" && c.Origin != origin {
			continue
		}
		if v.State == None {
			v.State = Permitted
		}
		for _, l := range c.Licenses {
			v.Conditions = appendNew(v.Conditions, l.Conditions...)
		}
		for bit := Uses(1); bit != 0 && bit <= UseSearch; bit <<= 1 {
			if uses&bit == 0 {
				continue
			}
			s, payment := c.decide(bit)
			if s > v.State {
				v.State, v.Use, v.Content, v.Payment = s, bit.String(), c.URL, payment
				v.Server = ""
				if s == Required {
					v.Server = c.Server
				}
			}
		}
	}
	return v
}

// decide returns what c says about the use x, and the payment type of
// the license a Required verdict uses.
func (c *Content) decide(x Uses) (State, string) {
	granted, free := false, false
	payment := ""
	for i := range c.Licenses {
		l := &c.Licenses[i]
		if !l.grants(x) {
			continue
		}
		granted = true
		switch {
		case !l.Paid && !l.Reporting:
			free = true
		case payment == "" && l.Paid:
			payment = l.Payment
		case payment == "":
			payment = "reporting"
		}
	}
	switch {
	case !granted:
		return Prohibited, ""
	case c.Server != "":
		return Required, payment
	case !free:
		return Required, payment
	}
	return Permitted, ""
}

// covering appends to dst the indexes, in document order, of the
// contents whose url pattern matches path (path and query, as sent),
// whatever their origin, with the count of the matching work. As the
// rules of a robots.txt, the patterns never cover /robots.txt itself
// (RFC 9309 §2.2.2).
func (d *Document) covering(path string, dst []int) ([]int, int) {
	if d.match == nil {
		return dst, 0
	}
	p := robots.CanonicalPath(path)
	if p == "/robots.txt" {
		return dst, len(path)
	}
	dst, work := d.match.AllWork(p, dst)
	return dst, work + len(path)
}

// maxPattern is the longest url pattern read; a longer one is read as
// "/" (the whole site), which can only narrow what is granted.
const maxPattern = 8 << 10

// compile sets the Origin and Pattern of d's contents from their URLs,
// and compiles the patterns into one matcher.
func (d *Document) compile() {
	pats := make([]string, len(d.Contents))
	for i := range d.Contents {
		c := &d.Contents[i]
		c.Origin, c.Pattern = splitURL(c.URL)
		pats[i] = rulePattern(c.Pattern)
	}
	d.match = robots.NewPatternMatch(pats)
}

// rulePattern is the pattern of the rule "Disallow: " + pattern as
// robots.txt's parser keeps it. A pattern up to [maxPattern] octets is
// kept whole; a longer one, which [splitURL]'s escapes can make, may be cut
// as a robots.txt line is.
func rulePattern(pattern string) string {
	if len(pattern) <= maxPattern {
		return pattern
	}
	r := robots.Parse([]byte("User-agent: *\nDisallow: " + pattern + "\n"))
	if gs := r.Groups(); len(gs) == 1 && len(gs[0].Rules) == 1 {
		return gs[0].Rules[0].Pattern
	}
	return "/"
}

// splitURL splits a <content url> into the origin it is bound to ("" for
// a path, which binds on the site whose robots.txt named the document)
// and its RFC 9309 pattern of path and query. A value that is empty,
// malformed, longer than 8 KiB or holds control characters covers the
// whole site ("/"): the reading that never leaves a URL out of terms
// meant to bind it.
func splitURL(v string) (origin, pattern string) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxPattern || strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return "", "/"
	}
	if i := strings.Index(v, "://"); i > 0 && !strings.ContainsAny(v[:i], "/*?$") {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
			return "", "/"
		}
		origin = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
		v = u.EscapedPath()
		if v == "" {
			v = "/"
		}
		if u.RawQuery != "" || u.ForceQuery {
			v += "?" + u.RawQuery
		}
	}
	if v[0] != '/' && v[0] != '*' {
		v = "/" + v
	}
	return origin, strings.ReplaceAll(v, "#", "%23")
}

// appendNew appends to s the values of add it does not hold (at most 16 in all).
func appendNew(s []string, add ...string) []string {
	for _, a := range add {
		if len(s) >= 16 {
			break
		}
		dup := false
		for _, x := range s {
			dup = dup || x == a
		}
		if !dup {
			s = append(s, a)
		}
	}
	return s
}

// MemSize estimates the heap d holds, for caches that bound their memory.
func (d *Document) MemSize() int64 {
	if d == nil {
		return 0
	}
	n := heapsize.Alloc(unsafe.Sizeof(*d)) + heapsize.Strings(d.Notes) + heapsize.Slice(d.Contents) + d.match.MemSize()
	for i := range d.Contents {
		c := &d.Contents[i]
		n += heapsize.String(c.URL) + heapsize.String(c.Origin) + heapsize.String(c.Pattern) +
			heapsize.String(c.Server) + heapsize.Slice(c.Licenses)
		for _, l := range c.Licenses {
			n += heapsize.String(l.Payment) + heapsize.Strings(l.Conditions)
		}
	}
	return n
}
