// Package robottag parses robot tags (X-Robots-Tag headers and <meta
// name="robots"> elements) and decides what they tell a crawler.
package robottag

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/robotsgate/robotsgate/robots"
	"golang.org/x/net/html"
)

// Directive is one robot-tag directive, from an X-Robots-Tag header or a
// <meta name="robots"> element.
type Directive struct {
	// Agent is the agent the directive is restricted to (lower case), or ""
	// when it applies to every agent.
	Agent string
	// Name is the directive's name in lower case, e.g. "noindex", "none",
	// "max-snippet" or "unavailable_after".
	Name string
	// Value is the text after "name:" for directives that carry one
	// ("max-snippet: 20"), else "".
	Value string
}

// String formats d as it would appear in an X-Robots-Tag header, for
// example "noindex", "max-snippet: 20" or "mandelbot: noindex".
func (d Directive) String() string {
	s := d.Name
	if d.Value != "" {
		s += ": " + d.Value
	}
	if d.Agent != "" {
		s = d.Agent + ": " + s
	}
	return s
}

// isKnownDirective reports whether name (lower case) is a robot-tag
// directive this package knows: one that carries a value after a colon
// (max-snippet, max-image-preview, max-video-preview, unavailable_after)
// or one without. Unknown directives are kept all the same; the list only
// tells a directive from an agent prefix ("noindex: x" is a malformed
// noindex, not an agent called noindex) and a crawler's <meta> element
// from an unrelated one.
func isKnownDirective(name string) bool {
	switch name {
	case "max-snippet", "max-image-preview", "max-video-preview", "unavailable_after",
		"all", "index", "follow", "noindex", "nofollow", "none", "noarchive", "nocache",
		"nosnippet", "notranslate", "noimageindex", "indexifembedded", "noodp", "noydir",
		"noai", "noimageai", "nositelinkssearchbox":
		return true
	}
	return false
}

// startsWithDirective reports whether s starts with a known directive name
// followed by the end of s, a colon or white space.
func startsWithDirective(s string) bool {
	i := len(robots.ProductToken(s))
	if i < len(s) && s[i] != ':' && s[i] != ' ' && s[i] != '\t' {
		return false
	}
	return isKnownDirective(strings.ToLower(s[:i]))
}

// ParseXRobotsTag parses the values of every X-Robots-Tag header of a
// response (http.Header.Values("X-Robots-Tag")).
//
// Each value is a comma-separated list of directives, compared
// case-insensitively; semicolons separate as commas do, quotes are
// ignored, and a name made of several words counts each known
// directive among them (lenient.go). A token of the form "agent: directive" restricts
// that directive, and every following one in the same header value up to
// the next agent prefix, to the named agent, as in
// "googlebot: noindex, nofollow". A token "head: rest" is an agent prefix
// only when head is not a known directive and rest is empty or starts
// with a known directive; otherwise ("max-snippet: 20", "max-foo: 3",
// "unavailable_after: 25 Jun 2010 15:00:00 PST") it is a directive with a
// value. Each
// header value starts again with no agent. Unknown directives are kept
// (for display) with their name lower-cased; values keep their case.
// Empty list elements are skipped.
func ParseXRobotsTag(values []string) []Directive {
	var ds []Directive
	for _, v := range values {
		ds = parseList(ds, v, true)
	}
	return ds
}

// parseList appends the directives of one comma-separated list to ds.
// agents says whether "agent:" prefixes are recognised (X-Robots-Tag) or
// not (meta content, whose agent is the element's name).
func parseList(ds []Directive, list string, agents bool) []Directive {
	agent := ""
	parts := splitList(list)
	for i := 0; i < len(parts); i++ {
		tok := unquote(strings.TrimSpace(parts[i]))
		var d Directive
		var ok bool
		if agents {
			agent, d, ok = parseHeaderToken(agent, tok)
		} else {
			d, ok = parseDirective(tok)
		}
		if !ok {
			continue
		}
		// RFC 850 / RFC 1123 dates contain a comma after the day name
		// ("unavailable_after: Friday, 25-Jun-10 15:00:00 GMT"): glue
		// the next element back on.
		if (d.Name == "unavailable_after" || d.Name == "unavailable-after") && isWeekday(d.Value) && i+1 < len(parts) {
			i++
			d.Value += ", " + strings.TrimSpace(parts[i])
		}
		ds = appendWords(ds, d) // lenient.go
	}
	return ds
}

// parseHeaderToken parses one element of an X-Robots-Tag list under the
// current agent scope and returns the new scope and the directive, if the
// element holds one ("googlebot:" alone only changes the scope).
func parseHeaderToken(agent, tok string) (string, Directive, bool) {
	for {
		head, rest, found := strings.Cut(tok, ":")
		if !found {
			break
		}
		h := strings.ToLower(strings.TrimSpace(head))
		rest = strings.TrimSpace(rest)
		// "head:" is an agent prefix only when what follows is empty or a
		// known directive; otherwise ("max-foo: 3", "unavailable-after:
		// 25 Jun 2010") it is a directive with a value.
		if isKnownDirective(h) || !isAgentToken(h) || rest != "" && !startsWithDirective(rest) {
			break
		}
		agent = h
		tok = rest
	}
	d, ok := parseDirective(tok)
	d.Agent = agent
	return agent, d, ok
}

// parseDirective parses "name" or "name: value" (no agent prefix).
func parseDirective(tok string) (Directive, bool) {
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return Directive{}, false
	}
	name, value, _ := strings.Cut(tok, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return Directive{}, false
	}
	return Directive{Name: name, Value: strings.TrimSpace(value)}, true
}

// isAgentToken reports whether s (lower case) can be a crawler's product
// token: letters, digits, '_' and '-', as [robots.ProductToken] accepts.
func isAgentToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// isWeekday reports whether s is a day name, full or abbreviated.
func isWeekday(s string) bool {
	switch strings.ToLower(s) {
	case "mon", "tue", "wed", "thu", "fri", "sat", "sun",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday":
		return true
	}
	return false
}

// isNotAgentMetaName reports whether name (lower case) is a standard or
// common <meta name> value that is not a crawler name; its content is not
// parsed as directives.
func isNotAgentMetaName(name string) bool {
	switch name {
	case "application-name", "author", "color-scheme", "copyright", "creator", "description",
		"format-detection", "generator", "keywords", "publisher", "rating", "referrer",
		"theme-color", "viewport":
		return true
	}
	return false
}

// ParseMetaRobots reads an HTML document from r and returns the directives
// of its <meta name="robots"> and <meta name="AGENT"> elements inside
// <head>. It stops reading at the end of the head (or at <body>); the
// caller bounds how much of r may be read.
//
// It uses [html.Tokenizer], not a full parse: every meta element before the
// first </head> or <body> tag counts (HTML lets a document omit the <head>
// start tag), and so does one between </head> and the body's first
// content (text, or a start tag a head cannot hold), which the HTML parser
// still puts in the head; those inside <noscript> count too (crawlers parse with
// scripting disabled), and meta elements inside raw-text elements
// (<script>, <title>, <style>, ...) or comments do not. Attribute names and the
// name attribute's value are case-insensitive; a name other than "robots"
// that looks like a product token (letters, digits, '_', '-') is an
// agent and is stored lower-cased in [Directive.Agent], but only when its
// content is made of known directives (so google-site-verification or
// msapplication-tilecolor are not read as crawlers); well-known
// non-crawler names (description, viewport, ...) are skipped. The content attribute is
// a comma-separated list parsed like an X-Robots-Tag value but without
// agent prefixes.
//
// Reaching the end of r, even in the middle of a tag, is not an error: the
// directives found so far are returned with a nil error. A read error
// other than io.EOF is returned, wrapped, with the directives found
// before it.
func ParseMetaRobots(r io.Reader) ([]Directive, error) {
	h, err := ParseHead(r)
	return h.Robots, err
}

// Head is what [ParseHead] finds in an HTML head.
type Head struct {
	Robots []Directive // as ParseMetaRobots returns them
	// Named maps each name [ParseHead] was asked for (lower case) to the
	// content of the first <meta> element of that name, when there is one.
	Named map[string]string
	// Ended says that the head ended before the input did: at <body> or
	// the first content after </head> (a meta between them still goes to
	// the head), or, as the HTML parser ends it, at the first start tag or
	// text that a head cannot hold (meta elements after it are still
	// read, up to </head> or <body>). When it is false, the input ended
	// inside the head: a caller that bounded the input saw only part of it.
	Ended bool
	// Charsets are the character encodings the head's meta elements
	// declare (<meta charset>, <meta http-equiv="Content-Type"
	// content="...; charset=...">), lower case, each once, in order, at
	// most [maxCharsets] of them.
	Charsets []string
}

// ParseHead is [ParseMetaRobots] that also returns the content of the
// first <meta> element of each of names (lower case; the name attribute
// compares case-insensitively), e.g. "tdm-reservation", read in the same
// pass over the document.
func ParseHead(r io.Reader, names ...string) (Head, error) {
	z := html.NewTokenizer(r)
	var h Head
	rawText := false   // the token before was the start tag of a raw-text element
	afterHead := false // after </head>, a meta still goes to the head, up to the body's first content
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			if errors.Is(err, io.EOF) {
				return h, nil
			}
			return h, fmt.Errorf("robottag: reading HTML for meta robots: %w", err)
		case html.EndTagToken:
			afterHead = afterHead || rawTagIs(z.Raw(), "</head")
		case html.TextToken:
			if !rawText && len(bytes.TrimLeft(z.Raw(), " \t\n\f\r")) > 0 {
				h.Ended = true // text ends a head
				if afterHead {
					return h, nil
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			// Raw avoids TagName's copy of every tag name.
			switch raw := z.Raw(); {
			case rawTagIs(raw, "<body"):
				h.Ended = true
				return h, nil
			case rawTagIs(raw, "<meta"):
				if _, hasAttr := z.TagName(); hasAttr {
					m := metaAttrs(z) // meta.go
					h.Robots = metaDirectives(m.name, m.content, h.Robots)
					h.name(names, m.name, m.content)
					h.charsets(m)
				}
			default:
				name, _ := z.TagName()
				h.Ended = h.Ended || !inHead(string(name))
				if afterHead && !inHead(string(name)) {
					return h, nil
				}
				rawText = tt == html.StartTagToken && isRawText(string(name))
				if tt == html.StartTagToken && string(name) == "noscript" {
					// Crawlers parse with scripting disabled: the
					// content of <noscript> is markup, its metas count.
					z.NextIsNotRawText()
				}
				continue
			}
		}
		rawText = false
	}
}

// inHead reports whether an element name (lower case) may stand in a
// head: the start tags the HTML parser's "in head" insertion mode keeps
// there (any other ends the head).
func inHead(name string) bool {
	switch name {
	case "html", "head", "base", "basefont", "bgsound", "link", "meta", "title",
		"noscript", "noframes", "style", "script", "template":
		return true
	}
	return false
}

// isRawText reports whether the tokenizer reads the content of an
// element name (lower case) as text, not markup: not <noscript>'s, which
// a parser with scripting disabled reads as markup.
func isRawText(name string) bool {
	switch name {
	case "iframe", "noembed", "noframes", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// name records content under name when name is one of names and has no
// content yet.
func (h *Head) name(names []string, name, content string) {
	for _, n := range names {
		if n != name {
			continue
		}
		if _, ok := h.Named[n]; !ok {
			if h.Named == nil {
				h.Named = make(map[string]string, len(names))
			}
			h.Named[n] = content
		}
		return
	}
}

// rawTagIs reports whether raw, the text of a tag token, is a tag whose
// "<name" or "</name" is prefix (lower case), compared case-insensitively.
func rawTagIs(raw []byte, prefix string) bool {
	if len(raw) <= len(prefix) || !strings.EqualFold(string(raw[:len(prefix)]), prefix) {
		return false
	}
	switch raw[len(prefix)] {
	case ' ', '\t', '\n', '\f', '\r', '/', '>':
		return true
	}
	return false
}

// metaDirectives appends the directives of a meta element of name (as
// [metaAttrs] returns it) and content.
func metaDirectives(name, content string, ds []Directive) []Directive {
	agent := name
	switch {
	case name == "robots":
		agent = ""
	case !isAgentToken(name) || isNotAgentMetaName(name):
		return ds
	}
	n := len(ds)
	ds = parseList(ds, content, false)
	for i := n; i < len(ds); i++ {
		// Under any other name than "robots", content that is not made
		// of known directives ("google-site-verification",
		// "msapplication-tilecolor") is not for a crawler.
		if agent != "" && !isKnownDirective(ds[i].Name) {
			return ds[:n]
		}
		ds[i].Agent = agent
	}
	return ds
}

// forAgent returns the directives of ds that apply to the crawler whose
// product token is agent: those without an agent and those naming agent
// (case-insensitively). "none" is expanded to "noindex" and "nofollow".
//
// agent may be a full User-Agent string ("Mandelbot/1.2 (+https://...)"):
// only its product token ([robots.ProductToken]) is compared. An empty agent
// selects only the directives for every agent. The result is
// in the order of ds, a "none" replaced in place by its two directives.
func forAgent(ds []Directive, agent string) []Directive {
	agent = robots.ProductToken(strings.TrimSpace(agent))
	var out []Directive
	for _, d := range ds {
		if d.Agent != "" && (agent == "" || !strings.EqualFold(d.Agent, agent)) {
			continue
		}
		if d.Name == "none" {
			out = append(out,
				Directive{Agent: d.Agent, Name: "noindex"},
				Directive{Agent: d.Agent, Name: "nofollow"})
			continue
		}
		out = append(out, d)
	}
	return out
}
