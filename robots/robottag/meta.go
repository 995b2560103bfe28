package robottag

import (
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// A meta element's attributes: its name and content, and the character
// encoding it declares, which tells a client how to decode the page.

// maxCharsets bounds [Head.Charsets]: a page declares one encoding; more
// than a few is no page a client reads as its author meant.
const maxCharsets = 8

// meta is what [ParseHead] reads of one meta element.
type meta struct {
	name    string // the name attribute, trimmed, lower case
	content string // the content attribute
	charset string // the charset attribute, "" when absent
	// equivType says that http-equiv is Content-Type: content is then a
	// media type whose charset parameter declares the encoding.
	equivType bool
}

// metaAttrs returns the attributes of the meta element z is on.
func metaAttrs(z *html.Tokenizer) meta {
	var m meta
	var hasName, hasContent, hasCharset, hasEquiv bool
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		// The first occurrence of a duplicated attribute wins, as in HTML.
		switch string(k) {
		case "name":
			if !hasName {
				m.name, hasName = string(v), true
			}
		case "content":
			if !hasContent {
				m.content, hasContent = string(v), true
			}
		case "charset":
			if !hasCharset {
				m.charset, hasCharset = string(v), true
			}
		case "http-equiv":
			if !hasEquiv {
				m.equivType, hasEquiv = strings.EqualFold(strings.TrimSpace(string(v)), "content-type"), true
			}
		}
	}
	m.name = strings.ToLower(strings.TrimSpace(m.name))
	return m
}

// charsets adds the encodings m declares to h.Charsets.
func (h *Head) charsets(m meta) {
	if c := strings.TrimSpace(m.charset); c != "" {
		h.addCharset(c)
	}
	if m.equivType {
		for _, c := range Charsets(m.content) {
			h.addCharset(c)
		}
	}
}

func (h *Head) addCharset(c string) {
	c = strings.ToLower(c)
	if len(h.Charsets) < maxCharsets && !slices.Contains(h.Charsets, c) {
		h.Charsets = append(h.Charsets, c)
	}
}

// Charsets returns the values of every charset parameter in v, a
// Content-Type value or a meta element's content, as a lenient client
// finds them: wherever "charset" (any case) is followed by '=', up to
// the next ';', ',' or white space, quotes removed; a value that does not
// parse as a media type still declares its charset.
func Charsets(v string) []string {
	var out []string
	lower := strings.ToLower(v)
	for i := strings.Index(lower, "charset"); i >= 0; {
		rest := strings.TrimLeft(lower[i+len("charset"):], " \t")
		if strings.HasPrefix(rest, "=") {
			rest = strings.TrimLeft(rest[1:], " \t")
			end := strings.IndexAny(rest, ";, \t")
			if end < 0 {
				end = len(rest)
			}
			if c := strings.Trim(rest[:end], `"'`); c != "" {
				out = append(out, c)
			}
		}
		next := strings.Index(lower[i+1:], "charset")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return out
}
