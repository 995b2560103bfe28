package robots

import (
	"bytes"
	"math"
	"sort"
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
	agents   []string // product tokens and "*" as written, in order
	tokens   []string // product tokens as written (no "*")
	global   bool     // a user-agent line named "*"
	rules    []Rule
	delay    time.Duration
	hasDelay bool
	usage    usageLines // its Content-Usage and Content-Signal lines
}

// parser accumulates the lines of one body.
type parser struct {
	r       *Robots
	src     []*srcGroup
	cur     *srcGroup  // group receiving rules, nil before the first user-agent line
	sawRule bool       // cur has had an allow or disallow line
	file    usageLines // Content-Signal lines before the first user-agent line
}

// parse builds a Robots from body, which is already cut to the limit.
func parse(body []byte) *Robots {
	p := &parser{r: &Robots{}}
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
		p.userAgentLine(string(value))
	case keyAllow, keyDisallow:
		if p.cur == nil {
			return // rules before the first user-agent line are ignored
		}
		p.sawRule = true
		p.cur.rules = append(p.cur.rules, Rule{Allow: kind == keyAllow, Pattern: string(value), Line: num})
	case keySitemap:
		if len(value) > 0 {
			p.r.sitemaps = append(p.r.sitemaps, string(value))
		}
	case keyCrawlDelay:
		// The largest valid value of a group counts; an invalid one, or
		// one outside any group, is kept for display like other fields.
		if p.crawlDelayLine(value) {
			return
		}
		p.r.extensions = append(p.r.extensions, Extension{Key: string(key), Value: string(value), Line: num})
	case keyContentUsage, keyContentSignal:
		// Kept for display as well. Usage lines never end a run of
		// user-agent lines (sawRule): Allow/Disallow verdicts do not move.
		p.usageLine(kind, num, key, value)
		p.r.extensions = append(p.r.extensions, Extension{Key: string(key), Value: string(value), Line: num})
	default:
		p.r.extensions = append(p.r.extensions, Extension{Key: string(key), Value: string(value), Line: num})
	}
}

// userAgentLine adds the agent v of a user-agent line to the current
// group, or starts a new group when rules ended the previous run of
// user-agent lines.
func (p *parser) userAgentLine(v string) {
	if p.cur == nil || p.sawRule {
		p.cur = &srcGroup{}
		p.src = append(p.src, p.cur)
		p.sawRule = false
	}
	if isGlobalAgent(v) {
		if !p.cur.global {
			p.cur.agents = append(p.cur.agents, "*")
		}
		p.cur.global = true
	} else if t := ProductToken(v); t != "" {
		p.cur.tokens = append(p.cur.tokens, t)
		p.cur.agents = append(p.cur.agents, t)
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
// "0.5". Anything else, and values too large for a time.Duration, are
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
	token string
	srcs  []int
}

// tokenSources returns the lower-cased agent tokens in order of first
// appearance, each token's groups, and the groups for "*".
func (p *parser) tokenSources() (order []string, toks map[string]*tokInfo, globalSrcs []int) {
	toks = map[string]*tokInfo{}
	for i, g := range p.src {
		seen := map[string]bool{}
		for _, t := range g.tokens {
			k := asciiLower(t)
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
	r := p.r
	order, toks, globalSrcs := p.tokenSources()

	// Tokens naming the same set of groups share one merged group.
	bySet := map[string]*merged{}
	setKey := func(srcs []int) string {
		var sb strings.Builder
		for _, s := range srcs {
			sb.WriteString(strconv.Itoa(s))
			sb.WriteByte(',')
		}
		return sb.String()
	}
	first := map[*merged]int{}
	parts := make([]*part, len(p.src)) // compiled for the groups that name an agent
	for i, sg := range p.src {
		if len(sg.agents) == 0 {
			continue // applies to no crawler
		}
		parts[i] = newPart(sg.rules)
		r.written = append(r.written, written{agents: dedupFold(sg.agents), part: parts[i], delay: sg.delay})
	}
	get := func(srcs []int, agent string) *merged {
		k := setKey(srcs)
		g := bySet[k]
		if g == nil {
			g = &merged{parts: make([]*part, len(srcs))}
			for i, s := range srcs {
				sg := p.src[s]
				g.parts[i] = parts[s]
				if sg.hasDelay && sg.delay > g.delay {
					g.delay = sg.delay
				}
			}
			g.usage = p.groupUsage(srcs)
			bySet[k] = g
			first[g] = srcs[0]
			r.groups = append(r.groups, g)
		}
		g.agents = append(g.agents, agent)
		return g
	}
	if len(order) > 0 {
		r.byAgent = make(map[string]entry, len(order))
	}
	for _, k := range order {
		ti := toks[k]
		r.byAgent[k] = entry{token: ti.token, group: get(ti.srcs, ti.token)}
	}
	if len(globalSrcs) > 0 {
		r.global = get(globalSrcs, "*")
	}
	r.usage = p.groupUsage(nil) // for agents no group applies to
	sort.SliceStable(r.groups, func(i, j int) bool { return first[r.groups[i]] < first[r.groups[j]] })
	r.index(parts, p.usageSets())
}

// dedupFold returns agents without the repetitions (compared
// case-insensitively) of an earlier one.
func dedupFold(agents []string) []string {
	if len(agents) <= 8 {
		out := agents[:0:0]
		for _, a := range agents {
			dup := false
			for _, o := range out {
				dup = dup || strings.EqualFold(a, o)
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
		if k := asciiLower(a); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}
