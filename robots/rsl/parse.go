// Package rsl reads RSL 1.0 ("Really Simple Licensing") license
// documents: the XML a robots.txt `License:` line points to, which says,
// per set of URLs (`<content url>`), which uses are permitted or
// prohibited (`<permits>`/`<prohibits type="usage">`), whether a license
// token from a License Server is needed (`server`) and what it costs
// (`<payment>`). It decides one URL for a set of uses. It is pure: no
// network, clock or logging; it imports only package robots, whose
// RFC 9309 matcher matches the `url` patterns.
//
// Where the RSL 1.0 text could not be confirmed, the package takes the
// reading that refuses rather than permits (docs/decisions.md lists
// them).
package rsl

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/robots"
)

// Namespace is the XML namespace of RSL documents; a document is
// identified by it, never by its media type.
const Namespace = "https://rslstandard.org/rsl"

// Bounds of a document; a document beyond one is an error
// ([ErrTooComplex]) and its terms are not known.
const (
	// maxDepth is the deepest element nesting read.
	maxDepth = 64
	// maxContents is the most <content> elements read.
	maxContents = 512
	// maxLicenses is the most <license> elements of one <content>.
	maxLicenses = 64
	// maxTokens is the most XML tokens read.
	maxTokens = 200_000
	// maxText is the most text of one <permits>/<prohibits>/<payment>
	// element kept.
	maxText = 4096
)

var (
	// ErrNotRSL: the body is XML but holds no RSL license (its root is
	// not an <rsl> of [Namespace], nor an RSS feed with RSL content).
	ErrNotRSL = errors.New("not an RSL document (no <rsl> root in the namespace " + Namespace + ")")
	// ErrTooComplex: the document is deeper, longer or holds more
	// elements than the package reads.
	ErrTooComplex = errors.New("RSL document beyond the bounds robotsgate reads")
	// ErrSyntax: the body is not well-formed XML (or not in UTF-8).
	ErrSyntax = errors.New("RSL document is not well-formed XML")
)

// Document is a parsed RSL license document.
type Document struct {
	// Contents are its <content> elements, in document order.
	Contents []Content
	// MaxAgeDays is the max-age attribute of <rsl>, 0 when absent or
	// invalid.
	MaxAgeDays int
	// Notes say what was read but is not conformant (unknown elements of
	// the RSL namespace, a <permits> of an unknown type); they never
	// make a term more permissive.
	Notes []string
	// match matches the url patterns of Contents, in order.
	match *robots.FirstMatch
}

// Content is one <content> element.
type Content struct {
	// URL is its url attribute as written.
	URL string
	// Origin is the scheme://host[:port] of a full-URL url, "" for a path
	// pattern; Pattern the RFC 9309 pattern matched against the request's
	// path and query. Callers may rewrite Origin to their canonical
	// spelling before the document is shared.
	Origin, Pattern string
	// Server is its License Server (the server attribute), "" when none:
	// a license token is needed even when the license is free.
	Server   string
	Licenses []License
}

// License is one <license> element: a set of terms.
type License struct {
	// Permits and Prohibits are the usages its <permits type="usage"> and
	// <prohibits type="usage"> list; HasPermits says a <permits
	// type="usage"> is present, so that only the uses it lists are
	// permitted.
	Permits, Prohibits Uses
	HasPermits         bool
	// Payment is the type of its <payment>, "" when it has none (free);
	// Paid says the payment is not free.
	Payment string
	Paid    bool
	// Reporting says it has a <reporting> element: robotsgate reports
	// nothing, so its grants need a license token like a paid one's.
	Reporting bool
	// Conditions lists terms robotsgate does not evaluate (user classes,
	// regions), e.g. `permits type="geo": US`.
	Conditions []string
}

// Parse reads an RSL document. Only the RSL elements that decide a use
// are kept; foreign elements are skipped. encoding/xml expands no
// entity but the five predefined ones and character references, so no
// entity can grow the input; depth and length are bounded ([maxDepth],
// [maxTokens], [maxContents], [maxLicenses]).
func Parse(body []byte) (*Document, error) {
	p := &parser{dec: xml.NewDecoder(bytes.NewReader(body)), doc: &Document{}}
	if err := p.run(); err != nil {
		return nil, err
	}
	if !p.isRSL {
		return nil, ErrNotRSL
	}
	p.doc.compile()
	return p.doc, nil
}

// element kinds of the parser's stack.
type kind uint8

const (
	kOther kind = iota
	kRSL
	kContent
	kLicense
	kPermits
	kProhibits
	kPayment
	kRSS
)

// parser is the state of one Parse.
type parser struct {
	dec    *xml.Decoder
	doc    *Document
	stack  []kind
	isRSL  bool
	text   strings.Builder
	target string // type attribute of the open permits/prohibits
	tokens int
	// rootDone: the root element has ended; only white space, comments
	// and processing instructions may follow.
	rootDone bool
}

func (p *parser) run() error {
	for {
		tok, err := p.dec.Token()
		if err == io.EOF {
			if len(p.stack) != 0 || p.tokens == 0 {
				return ErrSyntax
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		if p.tokens++; p.tokens > maxTokens {
			return fmt.Errorf("%w: more than %d XML tokens", ErrTooComplex, maxTokens)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if p.rootDone {
				return fmt.Errorf("%w: an element after the root element", ErrSyntax)
			}
			if err := p.start(t); err != nil {
				return err
			}
		case xml.EndElement:
			p.end()
			p.rootDone = len(p.stack) == 0
		case xml.CharData:
			if p.rootDone && len(bytes.TrimSpace(t)) > 0 {
				return fmt.Errorf("%w: text after the root element", ErrSyntax)
			}
			if p.top() == kPermits || p.top() == kProhibits {
				if p.text.Len()+len(t) <= maxText {
					p.text.Write(t)
				}
			}
		}
	}
}

// top is the kind of the innermost open element.
func (p *parser) top() kind {
	if len(p.stack) == 0 {
		return kOther
	}
	return p.stack[len(p.stack)-1]
}

// start handles a start tag.
func (p *parser) start(t xml.StartElement) error {
	if len(p.stack) >= maxDepth {
		return fmt.Errorf("%w: elements nested deeper than %d", ErrTooComplex, maxDepth)
	}
	k := kOther
	parent := p.top()
	switch {
	case len(p.stack) == 0 && t.Name.Space == Namespace && t.Name.Local == "rsl":
		k, p.isRSL = kRSL, true
		if n, err := strconv.Atoi(attr(t, "max-age")); err == nil && n > 0 {
			p.doc.MaxAgeDays = n
		}
	case len(p.stack) == 0 && t.Name.Local == "rss":
		k = kRSS
	case t.Name.Space != Namespace:
	case t.Name.Local == "content":
		if len(p.doc.Contents) == maxContents {
			return fmt.Errorf("%w: more than %d <content> elements", ErrTooComplex, maxContents)
		}
		if len(p.stack) > 0 && p.stack[0] == kRSS {
			p.isRSL = true // an RSS license feed
		}
		k = kContent
		p.doc.Contents = append(p.doc.Contents, Content{URL: attr(t, "url"), Server: strings.TrimSpace(attr(t, "server"))})
	case t.Name.Local == "license" && parent == kContent:
		c := p.content()
		if len(c.Licenses) == maxLicenses {
			return fmt.Errorf("%w: more than %d <license> elements in one <content>", ErrTooComplex, maxLicenses)
		}
		k = kLicense
		c.Licenses = append(c.Licenses, License{})
	case (t.Name.Local == "permits" || t.Name.Local == "prohibits") && parent == kLicense:
		k = kPermits
		if t.Name.Local == "prohibits" {
			k = kProhibits
		}
		p.text.Reset()
		p.target = strings.TrimSpace(attr(t, "type"))
	case t.Name.Local == "reporting" && parent == kLicense:
		p.license().Reporting = true
	case t.Name.Local == "payment" && parent == kLicense:
		k = kPayment
		l := p.license()
		l.Payment = strings.TrimSpace(attr(t, "type"))
		if l.Payment == "" {
			l.Payment = "unspecified"
		}
		l.Paid = l.Payment != "free" && l.Payment != "attribution"
	case !knownElement(t.Name.Local):
		// Unknown RSL elements make a document non-conformant; what it
		// states otherwise still binds.
		p.noteOnce("unknown RSL element <" + t.Name.Local + ">")
	}
	p.stack = append(p.stack, k)
	return nil
}

// end handles an end tag (encoding/xml checks that it matches).
func (p *parser) end() {
	k := p.top()
	p.stack = p.stack[:len(p.stack)-1]
	if k == kPermits || k == kProhibits {
		p.terms(k == kPermits)
	}
}

// terms records the text of the <permits> or <prohibits> just closed.
func (p *parser) terms(permits bool) {
	l := p.license()
	text := p.text.String()
	typ := p.target
	name := "prohibits"
	if permits {
		name = "permits"
	}
	switch typ {
	case "usage", "":
		// A missing type is read as usage: the reading that refuses.
		uses, unknown := parseUses(text)
		if !permits {
			// Pre-1.0 tokens are not RSL 1.0 tokens, but a prohibition
			// written with one is read as meant.
			legacy, rest := parseLegacy(unknown)
			uses, unknown = uses|legacy, rest
		}
		if permits {
			l.Permits |= uses
			l.HasPermits = true
		} else {
			l.Prohibits |= uses
		}
		if len(unknown) > 0 {
			p.noteOnce(fmt.Sprintf("unknown usage in <%s>: %s", name, strings.Join(unknown, " ")))
		}
	default:
		l.Conditions = append(l.Conditions, fmt.Sprintf("%s type=%q: %s", name, typ, strings.Join(strings.Fields(text), " ")))
	}
}

// parseLegacy maps the pre-1.0 tokens train-ai (ai-train) and tdm (text
// and data mining: ai-all) of a prohibition, and returns the others.
func parseLegacy(tokens []string) (u Uses, rest []string) {
	for _, t := range tokens {
		switch t {
		case "train-ai":
			u |= UseAITrain
		case "tdm":
			u |= UseAIAll
		default:
			rest = append(rest, t)
		}
	}
	return u, rest
}

// content is the <content> being read.
func (p *parser) content() *Content { return &p.doc.Contents[len(p.doc.Contents)-1] }

// license is the <license> being read.
func (p *parser) license() *License {
	c := p.content()
	return &c.Licenses[len(c.Licenses)-1]
}

// knownElement reports whether local names an element of RSL 1.0.
func knownElement(local string) bool {
	switch local {
	case "rsl", "content", "license", "permits", "prohibits", "payment", "standard", "custom", "amount", "accepts",
		"reporting", "legal", "alternate", "schema", "copyright", "terms":
		return true
	}
	return false
}

// noteOnce adds s to the document's notes unless it is there (at most 16).
func (p *parser) noteOnce(s string) {
	if len(p.doc.Notes) >= 16 {
		return
	}
	for _, n := range p.doc.Notes {
		if n == s {
			return
		}
	}
	p.doc.Notes = append(p.doc.Notes, s)
}

// attr returns the value of the attribute local (in no namespace) of t.
func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local && (a.Name.Space == "" || a.Name.Space == Namespace) {
			return a.Value
		}
	}
	return ""
}
