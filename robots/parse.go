package robots

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/robotsgate/robotsgate/robots/internal/index"
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
	keyLicense       // License (RSL 1.0, license.go)
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
// lines up to the next user-agent line that follows a rule. Its agents and
// rules are ranges of the parser's arrays, which all groups share.
type srcGroup struct {
	agents   [2]uint32 // parser.agents[agents[0]:agents[1]]: tokens and "*" as written
	rules    [2]uint32 // its rules, as numbered by parser.b
	delay    time.Duration
	usage    uint32 // 1 + the index into parser.usage of its usage lines; 0 when none
	written  uint32 // its index into Robots.written, once built
	hasDelay bool
	global   bool // a user-agent line named "*"
}

// As in [Robots], the indexes of a group as written are uint32: a file
// has fewer than 2^32 lines of each kind.

// agentRange returns the indexes into parser.agents of g's agents.
func (g *srcGroup) agentRange() (int, int) { return int(g.agents[0]), int(g.agents[1]) }

// parser accumulates the lines of one body.
type parser struct {
	r *Robots
	b *index.Builder // the Allow and Disallow lines
	// text is the body as one string, which every string of r shares;
	// a slice b of the body starts at text[end-cap(b)].
	text    string
	end     int
	src     []srcGroup
	agents  []span // the agents of all groups, group by group
	usage   []usageLines
	sawRule bool       // the current group has had an allow or disallow line
	nul     bool       // the body has a NUL octet
	hasCR   bool       // the body has a CR
	file    usageLines // Content-Signal lines before the first user-agent line
}

// parse builds a Robots from body, which is already cut to the limit.
func parse(body []byte) *Robots { return parseMode(body, false) }

// parseMode is parse; with compiled set, every part is compiled (tests
// compare both forms and inspect the compiled one).
func parseMode(body []byte, compiled bool) *Robots {
	p := &parser{r: &Robots{}, text: string(body), end: cap(body)}
	p.r.text = p.text
	p.b = index.NewBuilder(p.text, compiled)
	n := p.b.Room()
	p.agents = make([]span, 0, min(n/4+2, 256))
	p.src = make([]srcGroup, 0, min(n/8+1, 64))
	// Skip a byte order mark, or the prefix of one, as Google does.
	i := 0
	for i < len(body) && i < len(utf8BOM) {
		if body[i] != utf8BOM[i] {
			break
		}
		i++
	}
	body = body[i:]

	p.readLines(body)
	p.finish()
	return p.r
}

// readLines hands each line of body to p.line.
func (p *parser) readLines(body []byte) {
	p.nul = bytes.IndexByte(body, 0) >= 0
	p.hasCR = bytes.IndexByte(body, '\r') >= 0
	line := 0
	if !p.hasCR {
		for {
			line++
			j := bytes.IndexByte(body, '\n')
			if j < 0 {
				p.line(line, body)
				return
			}
			p.line(line, body[:j])
			body = body[j+1:]
		}
	}
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
}

// off returns the offset of b, a slice of the body, in p.text.
func (p *parser) off(b []byte) int { return p.end - cap(b) }

// str returns b, a slice of the body, as a string sharing p.text.
func (p *parser) str(b []byte) string { return p.text[p.off(b):][:len(b)] }

// line handles one line (without its line ending).
func (p *parser) line(num int, b []byte) {
	if len(b) > maxLineLen {
		b = b[:maxLineLen]
	}
	// Google handles lines as C strings: a NUL byte ends the line.
	if p.nul {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
	}
	key, value, ok := splitKeyValue(b)
	if !ok {
		return
	}
	kind := classify(key)
	st := &p.r.stats
	// Google's parser counts usage lines as unknown too.
	if kind == keyUnknown || kind == keyCrawlDelay || kind == keyContentUsage || kind == keyContentSignal || kind == keyLicense {
		st.unknown++
	} else {
		st.directives++
	}
	st.lastDirective = num

	switch kind {
	case keyUserAgent:
		p.userAgentLine(value)
	case keyAllow, keyDisallow:
		if len(p.src) == 0 {
			return // rules before the first user-agent line are ignored
		}
		p.sawRule = true
		p.b.AddRule(kind == keyAllow, p.off(value), len(value), num)
		p.src[len(p.src)-1].rules[1] = uint32(p.b.NumRules())
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
	case keyLicense:
		// Kept for display as well; never ends a run of user-agent lines.
		p.licenseLine(value)
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
	if len(p.src) == 0 || p.sawRule {
		a, r := uint32(len(p.agents)), uint32(p.b.NumRules())
		p.src = append(p.src, srcGroup{agents: [2]uint32{a, a}, rules: [2]uint32{r, r}})
		p.sawRule = false
	}
	g := &p.src[len(p.src)-1]
	if isGlobalAgent(v) {
		if !g.global {
			p.agents = append(p.agents, 0)
		}
		g.global = true
	} else if t := ProductToken(v); t != "" {
		p.agents = append(p.agents, newSpan(p.off(value), len(t)))
	}
	g.agents[1] = uint32(len(p.agents))
}

// crawlDelayLine records the Crawl-delay value of the current group when
// it is valid and the largest so far, and reports whether value was a
// valid delay inside a group.
func (p *parser) crawlDelayLine(value []byte) bool {
	d, ok := parseDelay(value)
	if !ok || len(p.src) == 0 {
		return false
	}
	if g := &p.src[len(p.src)-1]; !g.hasDelay || d > g.delay {
		g.delay, g.hasDelay = d, true
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
	// Every name of a kind starts with the same letter: the first octet
	// rules out the others.
	switch key[0] | 0x20 {
	case 'u', 'a', 'd', 's', 'c', 'l':
	default:
		return keyUnknown
	}
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
	case len(key) == len("license") && hasPrefixFold(key, "license"):
		return keyLicense
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

// finish merges the groups as written into the groups Robots exposes and
// compiles their rules.
func (p *parser) finish() {
	toks, lists, global := p.tokens()
	p.buildParts()
	p.licenseGroups()
	p.merge(toks, lists, global)
	p.r.usage = p.groupUsage(nil) // for agents no group applies to
	sets := p.usageSets()
	var paths []*index.Paths
	for _, s := range sets {
		if s.paths != nil {
			paths = append(paths, s.paths)
		}
	}
	p.r.ix = p.b.Finish(paths)
	p.r.size = p.r.memSize(sets)
}
