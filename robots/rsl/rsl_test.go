package rsl

import (
	"errors"
	"strings"
	"testing"
)

const siteOrigin = "https://example.com"

// doc wraps contents in an RSL root.
func doc(contents string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<rsl xmlns="https://rslstandard.org/rsl">` + contents + `</rsl>`
}

func mustParse(t *testing.T, body string) *Document {
	t.Helper()
	d, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, body)
	}
	return d
}

// TestSpecExamples decides the conformance-style examples of rsl.md §8
// and the documents of its §3.5.
func TestSpecExamples(t *testing.T) {
	articles := doc(`<content url="/"><license><permits type="usage">all</permits></license></content>
		<content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content>`)
	searchOnly := doc(`<content url="/"><license><permits type="usage">search</permits></license></content>`)
	noAI := doc(`<content url="/"><license><prohibits type="usage">ai-all</prohibits></license></content>`)
	server := doc(`<content url="/" server="https://api.rslcollective.org"><license><permits type="usage">all</permits></license></content>`)
	skeleton := doc(`<content url="/" server="https://licensing.example.com" lastmod="2026-10-01T00:00:00Z">
    <license>
      <permits type="usage">search ai-input</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="attribution"/>
      <legal type="warranty">ownership authority</legal>
    </license>
    <alternate type="text/markdown">/index.md</alternate>
    <terms>https://example.com/legal/ai-terms</terms>
  </content>`)
	paid := doc(`<content url="/"><license><permits type="usage">ai-train</permits>
		<payment type="crawl"><standard>https://example.com/pay-per-crawl</standard><amount currency="USD">0.015</amount></payment></license>
		<license><permits type="usage">search</permits></license></content>`)
	comma := doc(`<content url="/"><license><permits type="usage">search,ai-input</permits></license></content>`)
	for _, tc := range []struct {
		name, body, path string
		uses             Uses
		want             State
		use              string
	}{
		{"articles ai-train", articles, "/articles/x", UseAITrain, Prohibited, "ai-train"},
		{"articles search", articles, "/articles/x", UseSearch, Permitted, ""},
		{"elsewhere ai-train", articles, "/news/x", UseAITrain, Permitted, ""},
		{"search only, ai-input", searchOnly, "/a", UseAIInput, Prohibited, "ai-input"},
		{"search only, search", searchOnly, "/a", UseSearch, Permitted, ""},
		{"ai-all prohibits ai-index", noAI, "/a", UseAIIndex, Prohibited, "ai-index"},
		{"ai-all prohibits ai-train", noAI, "/a", UseAITrain, Prohibited, "ai-train"},
		{"ai-all leaves search", noAI, "/a", UseSearch, Permitted, ""},
		{"server: token required", server, "/a", UseSearch, Required, "search"},
		{"skeleton ai-train", skeleton, "/a", UseAITrain, Prohibited, "ai-train"},
		{"skeleton search needs the server's token", skeleton, "/a", UseSearch, Required, "search"},
		{"paid ai-train", paid, "/a", UseAITrain, Required, "ai-train"},
		{"free search beside a paid license", paid, "/a", UseSearch, Permitted, ""},
		{"0.9 comma list", comma, "/a", UseAIInput, Permitted, ""},
		{"two uses, the worst wins", searchOnly, "/a", UseSearch | UseAITrain, Prohibited, "ai-train"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustParse(t, tc.body).Decide(siteOrigin, tc.path, tc.uses)
			if v.State != tc.want || v.Use != tc.use {
				t.Fatalf("Decide(%s, %v) = %v %q, want %v %q", tc.path, tc.uses, v.State, v.Use, tc.want, tc.use)
			}
		})
	}
	if v := mustParse(t, server).Decide(siteOrigin, "/a", UseSearch); v.Server != "https://api.rslcollective.org" {
		t.Fatalf("server = %q", v.Server)
	}
}

// TestNarrowerNeverWidens: a narrower <content> that permits what a
// broader one prohibits does not license it (the most restrictive
// combination).
func TestNarrowerNeverWidens(t *testing.T) {
	d := mustParse(t, doc(`<content url="/"><license><prohibits type="usage">ai-train</prohibits></license></content>
		<content url="/public/"><license><permits type="usage">all</permits></license></content>`))
	if v := d.Decide(siteOrigin, "/public/a", UseAITrain); v.State != Prohibited || v.Content != "/" {
		t.Fatalf("got %+v", v)
	}
}

func TestContentURLMatching(t *testing.T) {
	for _, tc := range []struct {
		url, origin, path string
		want              bool
	}{
		{"/content/images/", siteOrigin, "/content/images/a.png", true},
		{"/content/images/", siteOrigin, "/content/other", false},
		{"/*.pdf$", siteOrigin, "/docs/a.pdf", true},
		{"/*.pdf$", siteOrigin, "/docs/a.pdf?x=1", false},
		{"/private", siteOrigin, "/private?x=1", true},
		{"https://EXAMPLE.com/a/", siteOrigin, "/a/b", true},
		{"https://example.com/a/", "https://other.example", "/a/b", false},
		{"http://example.com/", siteOrigin, "/a", false}, // scheme differs
		{"https://example.com", siteOrigin, "/anything", true},
		{"https://example.com/q?id=*", siteOrigin, "/q?id=7", true},
		{"", siteOrigin, "/x", true},                   // empty: the whole site
		{"articles/", siteOrigin, "/articles/1", true}, // relative without "/"
		{"/a%2Fb", siteOrigin, "/a%2fb", true},         // percent-encoding case
		{"/caf%C3%A9", siteOrigin, "/café", true},      // raw octets are encoded
		{"/b\tad", siteOrigin, "/anything", true},      // control character: the whole site
		{"/" + strings.Repeat("a", 9000), siteOrigin, "/b", true},
	} {
		d := mustParse(t, doc(`<content url="`+xmlAttr(tc.url)+`"><license><prohibits type="usage">all</prohibits></license></content>`))
		got := d.Decide(tc.origin, tc.path, UseSearch).State == Prohibited
		if got != tc.want {
			t.Errorf("url %.40q on %s%s: covered %v, want %v", tc.url, tc.origin, tc.path, got, tc.want)
		}
	}
}

// xmlAttr escapes s for an attribute value (control characters as
// tab as a character reference, which attribute normalisation keeps).
func xmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", "\t", "&#9;").Replace(s)
}

func TestIdentifiedByNamespace(t *testing.T) {
	for name, body := range map[string]string{
		"no namespace":      `<rsl><content url="/"><license><prohibits type="usage">all</prohibits></license></content></rsl>`,
		"other namespace":   `<rsl xmlns="https://example.com/rsl"><content url="/"/></rsl>`,
		"html":              `<html><body>hello</body></html>`,
		"atom feed":         `<feed xmlns="http://www.w3.org/2005/Atom"></feed>`,
		"rss without rsl":   `<rss version="2.0"><channel><item/></channel></rss>`,
		"content not root ": `<root xmlns:rsl="https://rslstandard.org/rsl"><rsl:content url="/"/></root>`,
	} {
		if _, err := Parse([]byte(body)); !errors.Is(err, ErrNotRSL) {
			t.Errorf("%s: err = %v, want ErrNotRSL", name, err)
		}
	}
	// A prefixed root and an RSS license feed are RSL.
	prefixed := `<r:rsl xmlns:r="https://rslstandard.org/rsl"><r:content url="/"><r:license><r:prohibits type="usage">ai-train</r:prohibits></r:license></r:content></r:rsl>`
	feed := `<rss xmlns:rsl="https://rslstandard.org/rsl" version="2.0"><channel><item><link>https://example.com/a</link>
		<rsl:content url="https://example.com/a"><rsl:license><rsl:prohibits type="usage">ai-train</rsl:prohibits></rsl:license></rsl:content></item></channel></rss>`
	for name, body := range map[string]string{"prefixed": prefixed, "feed": feed} {
		if v := mustParse(t, body).Decide(siteOrigin, "/a", UseAITrain); v.State != Prohibited {
			t.Errorf("%s: %+v", name, v)
		}
	}
}

func TestHostileXML(t *testing.T) {
	deep := strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1)
	many := doc(strings.Repeat(`<content url="/"/>`, maxContents+1))
	for name, tc := range map[string]struct {
		body string
		err  error
	}{
		"deep":        {doc(deep), ErrTooComplex},
		"contents":    {many, ErrTooComplex},
		"tokens":      {doc(strings.Repeat("<x:a xmlns:x='u'/>", maxTokens)), ErrTooComplex},
		"unclosed":    {`<rsl xmlns="https://rslstandard.org/rsl"><content url="/">`, ErrSyntax},
		"empty":       {``, ErrSyntax},
		"not xml":     {`User-agent: *`, ErrNotRSL},
		"entity":      {`<!DOCTYPE rsl [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><rsl xmlns="https://rslstandard.org/rsl"><content url="&b;"/></rsl>`, ErrSyntax},
		"external":    {`<!DOCTYPE rsl SYSTEM "file:///etc/passwd"><rsl xmlns="https://rslstandard.org/rsl"><content url="&xxe;"/></rsl>`, ErrSyntax},
		"latin1":      {`<?xml version="1.0" encoding="ISO-8859-1"?><rsl xmlns="https://rslstandard.org/rsl"/>`, ErrSyntax},
		"mismatched":  {`<rsl xmlns="https://rslstandard.org/rsl"><content></license></rsl>`, ErrSyntax},
		"two roots":   {doc("") + doc(""), ErrSyntax},
		"trailing":    {doc("") + "garbage", ErrSyntax},
		"dtd ignored": {`<!DOCTYPE rsl><rsl xmlns="https://rslstandard.org/rsl"/>`, nil},
	} {
		_, err := Parse([]byte(tc.body))
		if tc.err == nil {
			continue // must only not crash or hang
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.err)
		}
	}
}

func TestUnknownAndConditions(t *testing.T) {
	d := mustParse(t, doc(`<content url="/"><license><permit type="usage">all</permit>
		<permits type="geo">US</permits><prohibits type="usage">ai-train bogus</prohibits>
		<reporting type="telemetry" profile="https://p.example"/></license></content>`))
	if len(d.Notes) != 2 {
		t.Fatalf("notes %q", d.Notes)
	}
	v := d.Decide(siteOrigin, "/", UseSearch)
	// A license with <reporting> needs a token like a paid one.
	if v.State != Required || v.Payment != "reporting" || len(v.Conditions) != 1 {
		t.Fatalf("got %+v", v)
	}
	// Pre-1.0 tokens in a prohibition are read as meant; in a permission
	// they grant nothing.
	old := mustParse(t, doc(`<content url="/"><license><prohibits type="usage">train-ai</prohibits></license></content>
		<content url="/b/"><license><permits type="usage">train-ai</permits></license></content>`))
	if v := old.Decide(siteOrigin, "/a", UseAITrain); v.State != Prohibited {
		t.Fatalf("train-ai prohibition: %+v", v)
	}
	if v := old.Decide(siteOrigin, "/b/x", UseSearch); v.State != Prohibited {
		t.Fatalf("train-ai permission granted search: %+v", v)
	}
	// A permits or prohibits without a type is read as usage.
	untyped := mustParse(t, doc(`<content url="/"><license><prohibits>search</prohibits></license></content>`))
	if v := untyped.Decide(siteOrigin, "/a", UseSearch); v.State != Prohibited {
		t.Fatalf("untyped prohibits: %+v", v)
	}
}

func TestMaxAgeAndNone(t *testing.T) {
	d := mustParse(t, `<rsl xmlns="https://rslstandard.org/rsl" max-age="7"><content url="/a/"><license/></content></rsl>`)
	if d.MaxAgeDays != 7 {
		t.Fatalf("max-age %d", d.MaxAgeDays)
	}
	if v := d.Decide(siteOrigin, "/b", UseAITrain); v.State != None {
		t.Fatalf("uncovered URL: %+v", v)
	}
	// An empty <license> grants everything.
	if v := d.Decide(siteOrigin, "/a/1", UseAITrain); v.State != Permitted {
		t.Fatalf("empty license: %+v", v)
	}
	// A <content> without any <license> grants nothing.
	if v := mustParse(t, doc(`<content url="/"/>`)).Decide(siteOrigin, "/a", UseSearch); v.State != Prohibited {
		t.Fatalf("no license: %+v", v)
	}
}
