package robots

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxLineLen is the number of bytes of a line that are kept; the rest of a
// longer line is ignored, as in Google's parser (2083 * 8 - 1 bytes).
const maxLineLen = 2083*8 - 1

// utf8BOM is the UTF-8 byte order mark, skipped (or any prefix of it) at
// the start of a body.
var utf8BOM = [3]byte{0xEF, 0xBB, 0xBF}

// keyKind is the kind of a robots.txt line's field.
type keyKind int

const (
	keyUnknown keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
	keyContentUsage  // Content-Usage (draft-ietf-aipref-attach)
	keyContentSignal // Content-Signal (Content Signals)
)

// parseStats counts what Parse recognised; used by tests.
type parseStats struct {
	directives    int // user-agent, allow, disallow and sitemap lines
	unknown       int // key: value lines with another key (crawl-delay included)
	lastDirective int // 1-based line number of the last of those
}

// cutAtLineEnd returns body cut to at most max bytes, ending after the last
// line break within them; when there is none, nothing is kept (the only
// line is incomplete).
func cutAtLineEnd(body []byte, max int) []byte {
	if max >= len(body) {
		return body
	}
	// A line ending right at the limit is complete.
	if c := body[max]; c == '\n' || c == '\r' {
		return body[:max]
	}
	head := body[:max]
	if i := bytes.LastIndexAny(head, "\r\n"); i >= 0 {
		return head[:i+1]
	}
	return head[:0]
}

// srcGroup is one group as written: consecutive user-agent lines and the
// lines up to the next user-agent line that follows a rule.
type srcGroup struct {
	agents   []span // product tokens and "*" as written, in order
	tokens   []span // product tokens as written (no "*")
	global   bool   // a user-agent line named "*"
	rules    []compactRule
	delay    time.Duration
	hasDelay bool
	usage    usageLines // its Content-Usage and Content-Signal lines
}

// parser accumulates the lines of one body.
type parser struct {
	r *Robots
	// text is the body as one string, which every string of r shares;
	// a slice b of the body starts at text[end-cap(b)].
	text     string
	end      int
	compiled bool    // compile every part
	sc       matcher // scratch of the compiled patterns of compact parts
	src      []*srcGroup
	cur      *srcGroup  // group receiving rules, nil before the first user-agent line
	sawRule  bool       // cur has had an allow or disallow line
	file     usageLines // Content-Signal lines before the first user-agent line
}

// parse builds a Robots from body, which is already cut to the limit.
func parse(body []byte) *Robots { return parseMode(body, false) }

// parseMode is parse; with compiled set, every part is compiled (tests
// compare both forms and inspect the compiled one).
func parseMode(body []byte, compiled bool) *Robots {
	p := &parser{r: &Robots{}, text: string(body), end: cap(body), compiled: compiled}
	p.r.text = p.text
	// Skip a byte order mark, or the prefix of one, as Google does.
	i := 0
	for i < len(body) && i < len(utf8BOM) {
		if body[i] != utf8BOM[i] {
			break
		}
		i++
	}
	body = body[i:]

	line := 0
	lastCR := false
	start := 0
	for j := 0; j < len(body); j++ {
		c := body[j]
		if c != '\n' && c != '\r' {
			continue
		}
		// The LF of a CRLF does not end another (empty) line.
		if !(c == '\n' && lastCR && j == start) {
			line++
			p.line(line, body[start:j])
		}
		lastCR = c == '\r'
		start = j + 1
	}
	line++
	p.line(line, body[start:])
	p.finish()
	return p.r
}

// off returns the offset of b, a slice of the body, in p.text.
func (p *parser) off(b []byte) int { return p.end - cap(b) }

// str returns b, a slice of the body, as a string sharing p.text.
func (p *parser) str(b []byte) string { return p.text[p.off(b):][:len(b)] }

// plainRules returns the rules of rs.
func plainRules(rs []compactRule) []Rule {
	out := make([]Rule, len(rs))
	for i := range rs {
		out[i] = rs[i].Rule
	}
	return out
}

// line handles one line (without its line ending).
func (p *parser) line(num int, b []byte) {
	if len(b) > maxLineLen {
		b = b[:maxLineLen]
	}
	// Google handles lines as C strings: a NUL byte ends the line.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	key, value, ok := splitKeyValue(b)
	if !ok {
		return
	}
	kind := classify(key)
	st := &p.r.stats
	// Google's parser counts usage lines as unknown too.
	if kind == keyUnknown || kind == keyCrawlDelay || kind == keyContentUsage || kind == keyContentSignal {
		st.unknown++
	} else {
		st.directives++
	}
	st.lastDirective = num

	switch kind {
	case keyUserAgent:
		p.userAgentLine(value)
	case keyAllow, keyDisallow:
		if p.cur == nil {
			return // rules before the first user-agent line are ignored
		}
		p.sawRule = true
		p.cur.rules = append(p.cur.rules, compactRule{Rule{Allow: kind == keyAllow, Pattern: p.str(value), Line: num}, p.off(value)})
	case keySitemap:
		if len(value) > 0 {
			p.r.sitemaps = append(p.r.sitemaps, p.str(value))
		}
	case keyCrawlDelay:
		// The largest valid value of a group counts; an invalid one, or
		// one outside any group, is kept for display like other fields.
		if p.crawlDelayLine(value) {
			return
		}
		p.r.extensions = append(p.r.extensions, Extension{Key: p.str(key), Value: p.str(value), Line: num})
	case keyContentUsage, keyContentSignal:
		// Kept for display as well. Usage lines never end a run of
		// user-agent lines (sawRule): Allow/Disallow verdicts do not move.
		p.usageLine(kind, num, key, value)
		p.r.extensions = append(p.r.extensions, Extension{Key: p.str(key), Value: p.str(value), Line: num})
	default:
		p.r.extensions = append(p.r.extensions, Extension{Key: p.str(key), Value: p.str(value), Line: num})
	}
}

// userAgentLine adds the agent v of a user-agent line to the current
// group, or starts a new group when rules ended the previous run of
// user-agent lines.
func (p *parser) userAgentLine(value []byte) {
	v := p.str(value)
	if p.cur == nil || p.sawRule {
		p.cur = &srcGroup{}
		p.src = append(p.src, p.cur)
		p.sawRule = false
	}
	if isGlobalAgent(v) {
		if !p.cur.global {
			p.cur.agents = append(p.cur.agents, 0)
		}
		p.cur.global = true
	} else if t := ProductToken(v); t != "" {
		s := newSpan(p.off(value), len(t))
		p.cur.tokens = append(p.cur.tokens, s)
		p.cur.agents = append(p.cur.agents, s)
	}
}

// crawlDelayLine records the Crawl-delay value of the current group when
// it is valid and the largest so far, and reports whether value was a
// valid delay inside a group.
func (p *parser) crawlDelayLine(value []byte) bool {
	d, ok := parseDelay(value)
	if !ok || p.cur == nil {
		return false
	}
	if !p.cur.hasDelay || d > p.cur.delay {
		p.cur.delay, p.cur.hasDelay = d, true
	}
	return true
}

// isSpace reports whether c is ASCII white space as C's isspace sees it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// splitKeyValue splits a line into key and value as Google's parser does:
// a comment is removed, the line is trimmed, and key and value are
// separated by the first colon, or, when the line has no colon, by white
// space if the line is exactly two white-space separated tokens.
func splitKeyValue(b []byte) (key, value []byte, ok bool) {
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	b = trimSpace(b)
	sep := bytes.IndexByte(b, ':')
	valStart := sep + 1
	if sep < 0 {
		sep = bytes.IndexAny(b, " \t")
		if sep < 0 {
			return nil, nil, false
		}
		valStart = sep + 1
		rest := b[valStart:]
		for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
			rest = rest[1:]
		}
		if bytes.IndexAny(rest, " \t") >= 0 {
			return nil, nil, false
		}
	}
	key = trimSpace(b[:sep])
	if len(key) == 0 {
		return nil, nil, false
	}
	return key, trimSpace(b[valStart:]), true
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// classify returns the kind of a field name. Like Google's parser it
// matches by case-insensitive prefix and accepts frequent misspellings.
func classify(key []byte) keyKind {
	switch {
	case hasPrefixFold(key, "user-agent"), hasPrefixFold(key, "useragent"), hasPrefixFold(key, "user agent"):
		return keyUserAgent
	case hasPrefixFold(key, "allow"):
		return keyAllow
	case hasPrefixFold(key, "disallow"), hasPrefixFold(key, "dissallow"), hasPrefixFold(key, "dissalow"),
		hasPrefixFold(key, "disalow"), hasPrefixFold(key, "diasllow"), hasPrefixFold(key, "disallaw"):
		return keyDisallow
	case hasPrefixFold(key, "sitemap"), hasPrefixFold(key, "site-map"):
		return keySitemap
	case len(key) == len("crawl-delay") && (hasPrefixFold(key, "crawl-delay") || hasPrefixFold(key, "crawl delay")),
		len(key) == len("crawldelay") && hasPrefixFold(key, "crawldelay"):
		return keyCrawlDelay
	case len(key) == len("content-usage") && hasPrefixFold(key, "content-usage"):
		return keyContentUsage
	case len(key) == len("content-signal") && hasPrefixFold(key, "content-signal"):
		return keyContentSignal
	}
	return keyUnknown
}

// parseDelay parses a Crawl-delay value: decimal seconds such as "10" or
// "0.5". Anything else, and values too large for a [time.Duration], are
// invalid.
func parseDelay(v []byte) (time.Duration, bool) {
	digits, dot := 0, 0
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dot++
		default:
			return 0, false
		}
	}
	if digits == 0 || dot > 1 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f*1e9 >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(f * 1e9), true
}

// tokInfo is an agent token of the source groups: its first spelling and
// the indexes into parser.src of the groups that name it.
type tokInfo struct {
	token span
	srcs  []int
}

// tokenSources returns the lower-cased agent tokens in order of first
// appearance, each token's groups, and the groups for "*".
func (p *parser) tokenSources() (order []string, toks map[string]*tokInfo, globalSrcs []int) {
	toks = map[string]*tokInfo{}
	for i, g := range p.src {
		seen := map[string]bool{}
		for _, t := range g.tokens {
			k := asciiLower(p.r.str(t))
			if seen[k] {
				continue
			}
			seen[k] = true
			ti := toks[k]
			if ti == nil {
				ti = &tokInfo{token: t}
				toks[k] = ti
				order = append(order, k)
			}
			ti.srcs = append(ti.srcs, i)
		}
		if g.global {
			globalSrcs = append(globalSrcs, i)
		}
	}
	return order, toks, globalSrcs
}

// finish merges the groups as written into the groups Robots exposes and
// compiles their rules.
func (p *parser) finish() {
	order, toks, globalSrcs := p.tokenSources()
	parts := p.buildParts()
	p.merge(order, toks, globalSrcs, parts)
	p.r.usage = p.groupUsage(nil) // for agents no group applies to
	if len(p.r.crs) > 0 {
		p.r.lines = lineTable(p.text)
		p.r.cr = strings.IndexByte(p.text, '\r') >= 0
	}
	p.r.index(parts, p.usageSets())
}

// dedupFold returns the agents of r without the repetitions (compared
// case-insensitively) of an earlier one.
func (r *Robots) dedupFold(agents []span) []span {
	if len(agents) <= 8 {
		out := agents[:0:0]
		for _, a := range agents {
			dup := false
			for _, o := range out {
				dup = dup || strings.EqualFold(r.str(a), r.str(o))
			}
			if !dup {
				out = append(out, a)
			}
		}
		return out
	}
	seen := make(map[string]bool, len(agents))
	out := agents[:0:0]
	for _, a := range agents {
		if k := asciiLower(r.str(a)); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}
