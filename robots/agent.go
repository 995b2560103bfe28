package robots

import (
	"sort"
	"strings"
	"unsafe"
)

// isTokenChar reports whether c may appear in a product token. RFC 9309
// §2.2.1 allows only [A-Za-z_-]; robotsgate also accepts digits so that
// agents such as "MJ12bot" or "360Spider" keep their whole name (Google's
// parser cuts "MJ12bot" to "MJ", so the group written for MJ12bot would
// never apply to it).
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ProductToken returns the leading run of [A-Za-z0-9_-] of s, e.g.
// "MyBot" for "MyBot/2.1 (+https://x)" and "MJ12bot" for "MJ12bot/v1.4.8".
// It is the rule Parse applies to the value of a user-agent line. For a
// User-Agent header use [CrawlerToken], which looks past browser tokens:
// ProductToken gives "Mozilla" for "Mozilla/5.0 (compatible; BadBot/2.1)".
// Digits are accepted in addition to RFC 9309's [A-Za-z_-]; see the README
// section on deviations.
func ProductToken(userAgent string) string {
	i := 0
	for i < len(userAgent) && isTokenChar(userAgent[i]) {
		i++
	}
	return userAgent[:i]
}

// MaxAgentBytes bounds the agents robotsgate accepts: the configured
// one, a user's, and the one a request names (its User-Agent's crawler
// token, an override header), which is refused when longer. Product
// tokens are short words; the bound is far above them.
const MaxAgentBytes = 128

// ValidAgent reports whether agent is a product token as robotsgate reads
// one everywhere: non-empty and made only of [A-Za-z0-9_-]. That is RFC
// 9309 §2.2.1's [A-Za-z_-] plus digits, the same characters [ProductToken],
// [CrawlerToken] and Parse keep, so every agent for which ValidAgent is true
// can be selected by a group written for it, and every token they return
// is valid. The proxy's configuration, its agent override header and the
// check command all validate agents with it.
func ValidAgent(agent string) bool {
	if agent == "" {
		return false
	}
	for i := 0; i < len(agent); i++ {
		if !isTokenChar(agent[i]) {
			return false
		}
	}
	return true
}

// isGlobalAgent reports whether the value of a user-agent line names the
// default group: "*" alone or followed by whitespace (as Google accepts).
func isGlobalAgent(v string) bool {
	return len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1]))
}

// maxStackAgent is the longest agent lookup does without allocating.
const maxStackAgent = 64

// lookup returns the group that applies to agent and the token it was
// selected by ("*" for the default group). It does not allocate for an
// agent of up to [maxStackAgent] bytes.
func (r *Robots) lookup(agent string) (*merged, string) {
	if r == nil {
		return nil, ""
	}
	if agent != "" && len(r.byAgent) > 0 {
		var e *entry
		if len(agent) <= maxStackAgent {
			var buf [maxStackAgent]byte
			for i := 0; i < len(agent); i++ {
				c := agent[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[i] = c
			}
			e = r.find(unsafe.String(&buf[0], len(agent)))
		} else {
			e = r.find(asciiLower(agent))
		}
		if e != nil {
			return &r.groups[e.group], r.str(e.token)
		}
	}
	if g := r.globalGroup(); g != nil {
		return g, "*"
	}
	return nil, ""
}

// find returns the entry of the lower-cased token key, or nil.
func (r *Robots) find(key string) *entry {
	i := sort.Search(len(r.byAgent), func(i int) bool { return foldCompare(r.str(r.byAgent[i].token), key) >= 0 })
	if i < len(r.byAgent) && foldCompare(r.str(r.byAgent[i].token), key) == 0 {
		return &r.byAgent[i]
	}
	return nil
}

// foldCompare compares a and b as asciiLower(a) and asciiLower(b) compare.
func foldCompare(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return int(x) - int(y)
		}
	}
	return len(a) - len(b)
}

// asciiLower returns s with ASCII upper-case letters mapped to lower case
// (unlike [strings.ToLower], which also folds some non-ASCII letters such as
// the Kelvin sign to ASCII ones).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// CrawlerToken returns the robots.txt product token of the crawler that
// sent the User-Agent header value ua, or "" when ua names no crawler (a
// plain browser, an empty or garbled header). "" selects only the "*"
// group, so a browser's User-Agent can never pick a group by accident.
//
// Crawlers hide their token among browser tokens: "Mozilla/5.0
// AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1;
// +http://www.google.com/bot.html) Chrome/W.X.Y.Z Safari/537.36" is
// Googlebot. ua is read left to right as products ("Name/version") and
// parenthesised comments (nested, with backslash escapes), and the first
// of these candidates that is not a browser token wins:
//
//   - outside comments, every product, "Name" or "Name/version" (products
//     are separated by whitespace, ';' or ',');
//   - inside a comment with a "compatible" element, every word of every
//     element (elements are separated by ';' or ','), "Name" or
//     "Name/version": "(compatible; PetalBot;+https://…)" gives PetalBot,
//     "(compatible; Yahoo! Slurp; …)" gives Slurp;
//   - inside any other comment, only an element that is exactly one
//     "Name/version" word: "(Applebot/0.1; +http://…)" gives Applebot,
//     while platform details such as "(Linux; Android 6.0.1; Nexus 5X
//     Build/MMB29P)" give nothing.
//
// Name is the word's leading run of [A-Za-z0-9_-], the rule Parse applies
// to a user-agent line (so "archive.org_bot" is "archive" on both sides).
// It must contain a letter and be followed by nothing, '/' or '.': "9.0",
// "rv:11.0", "help@x" and "+http://…" name nothing. The browser tokens
// ([isBrowserToken], compared case-insensitively) are the engines, browsers
// and platforms real browsers send: Mozilla, compatible, AppleWebKit,
// KHTML, like, Gecko, Chrome, Safari, Mobile, Version, Firefox, Edg, OPR,
// Trident, MSIE, Windows, Linux, Android, Macintosh and the like. A token
// that is no browser's but that no group names leaves the "*" group in
// charge as well.
func CrawlerToken(ua string) string {
	for i := 0; i < len(ua); {
		switch c := ua[i]; {
		case c == '(':
			end := commentEnd(ua, i)
			if t := commentToken(ua[i+1 : end]); t != "" {
				return t
			}
			i = end + 1
		case isProductSep(c) || c == ')':
			i++
		default:
			j := i
			for j < len(ua) && !isProductSep(ua[j]) && ua[j] != '(' && ua[j] != ')' {
				j++
			}
			if t := wordToken(ua[i:j], true); t != "" {
				return t
			}
			i = j
		}
	}
	return ""
}

// isProductSep reports whether c separates products in a User-Agent.
func isProductSep(c byte) bool {
	return c == ' ' || c == '\t' || c == ';' || c == ','
}

// commentEnd returns the index of the ')' closing the comment that opens
// at ua[open], or len(ua) when it is never closed.
func commentEnd(ua string, open int) int {
	depth := 0
	for i := open; i < len(ua); i++ {
		switch ua[i] {
		case '\\':
			i++ // quoted-pair
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(ua)
}

// commentToken returns the crawler token of a User-Agent comment (without
// its parentheses), "" when it names none ([CrawlerToken]).
func commentToken(body string) string {
	elems := strings.FieldsFunc(body, func(r rune) bool { return r == ';' || r == ',' })
	compatible := false
	for _, e := range elems {
		if strings.EqualFold(strings.TrimSpace(e), "compatible") {
			compatible = true
			break
		}
	}
	for _, e := range elems {
		if compatible {
			for _, w := range strings.Fields(e) {
				if t := wordToken(w, true); t != "" {
					return t
				}
			}
			continue
		}
		if e = strings.TrimSpace(e); !strings.ContainsAny(e, " \t") {
			if t := wordToken(e, false); t != "" {
				return t
			}
		}
	}
	return ""
}

// wordToken returns the name of the product word w ("Name" or
// "Name/version"; only the latter when bare is false), "" when w is no
// product or names a browser ([CrawlerToken]).
func wordToken(w string, bare bool) string {
	n, letter := 0, false
	for n < len(w) && isTokenChar(w[n]) {
		letter = letter || 'a' <= w[n] && w[n] <= 'z' || 'A' <= w[n] && w[n] <= 'Z'
		n++
	}
	if n == 0 || !letter {
		return ""
	}
	if n < len(w) && w[n] != '/' && (!bare || w[n] != '.') {
		return ""
	}
	if !bare && n == len(w) {
		return ""
	}
	if isBrowserToken(w[:n]) {
		return ""
	}
	return w[:n]
}

// isBrowserToken reports whether tok (case-insensitively) is a product,
// engine, platform or compatibility token that browsers send, which never
// names a crawler ([CrawlerToken]).
func isBrowserToken(tok string) bool {
	var buf [24]byte
	if len(tok) > len(buf) {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(tok)]) {
	case "mozilla", "compatible", "like", "version", "mobile", "mobilesafari",
		// engines
		"applewebkit", "webkit", "khtml", "gecko", "trident", "presto", "blink", "goanna",
		// browsers
		"chrome", "chromium", "headlesschrome", "crios", "safari", "firefox", "fxios", "focus",
		"edg", "edge", "edga", "edgios", "opr", "opera", "opios", "opt", "msie", "iemobile",
		"samsungbrowser", "ucbrowser", "ucweb", "yabrowser", "yowser", "vivaldi", "brave", "whale",
		"silk", "electron", "qqbrowser", "miuibrowser", "huaweibrowser", "duckduckgo", "ddg",
		"seamonkey", "palemoon", "waterfox", "librewolf", "netscape", "konqueror", "epiphany",
		// platforms and platform details
		"windows", "nt", "win32", "win64", "wow64", "x64", "x86_64", "arm64", "linux", "android",
		"macintosh", "mac", "intel", "iphone", "ipad", "ipod", "cpu", "os", "x11", "ubuntu",
		"fedora", "cros", "u", "wv", "build", "kaios", "tizen", "cfnetwork", "darwin",
		// Internet Explorer comment elements
		"sv1", "slcc1", "slcc2", "clr", "media", "center", "pc", "tablet", "touch", "infopath",
		"zune", "ms-rtc", "lm":
		return true
	}
	return false
}
