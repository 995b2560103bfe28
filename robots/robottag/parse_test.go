package robottag

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func tagDir(agent, name, value string) Directive {
	return Directive{Agent: agent, Name: name, Value: value}
}

func TestParseXRobotsTag(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   []Directive
	}{
		// Every header example of the seed's Robot Tags page.
		{"seed noindex", []string{"noindex"}, []Directive{tagDir("", "noindex", "")}},
		{"seed mandelbot: noindex", []string{"mandelbot: noindex"}, []Directive{tagDir("mandelbot", "noindex", "")}},
		{"seed nofollow,noindex,noarchive", []string{"nofollow,noindex,noarchive"},
			[]Directive{tagDir("", "nofollow", ""), tagDir("", "noindex", ""), tagDir("", "noarchive", "")}},
		{"seed none", []string{"none"}, []Directive{tagDir("", "none", "")}},

		{"case-insensitive", []string{"NoIndex, MandelBot: NOFOLLOW"},
			[]Directive{tagDir("", "noindex", ""), tagDir("mandelbot", "nofollow", "")}},
		{"several headers", []string{"noindex", "nofollow"},
			[]Directive{tagDir("", "noindex", ""), tagDir("", "nofollow", "")}},
		{"agent scope runs to next agent prefix", []string{"googlebot: noindex, nofollow, otherbot: noarchive, nosnippet"},
			[]Directive{tagDir("googlebot", "noindex", ""), tagDir("googlebot", "nofollow", ""),
				tagDir("otherbot", "noarchive", ""), tagDir("otherbot", "nosnippet", "")}},
		{"agent scope ends with the header", []string{"googlebot: noindex", "nofollow"},
			[]Directive{tagDir("googlebot", "noindex", ""), tagDir("", "nofollow", "")}},
		{"value directives are not agents", []string{"max-snippet: 20, max-image-preview:large, max-video-preview: -1"},
			[]Directive{tagDir("", "max-snippet", "20"), tagDir("", "max-image-preview", "large"), tagDir("", "max-video-preview", "-1")}},
		{"unavailable_after keeps its colons and case", []string{"unavailable_after: 25 Jun 2010 15:00:00 PST"},
			[]Directive{tagDir("", "unavailable_after", "25 Jun 2010 15:00:00 PST")}},
		{"unavailable_after with a comma in the date", []string{"unavailable_after: Friday, 25-Jun-10 15:00:00 GMT, noarchive"},
			[]Directive{tagDir("", "unavailable_after", "Friday, 25-Jun-10 15:00:00 GMT"), tagDir("", "noarchive", "")}},
		{"agent then value directive", []string{"googlebot: unavailable_after: 25 Jun 2010 15:00:00 PST"},
			[]Directive{tagDir("googlebot", "unavailable_after", "25 Jun 2010 15:00:00 PST")}},
		{"agent then max-snippet", []string{"bingbot: max-snippet: 20, noindex"},
			[]Directive{tagDir("bingbot", "max-snippet", "20"), tagDir("bingbot", "noindex", "")}},
		{"hyphenated agent", []string{"googlebot-news: nosnippet"}, []Directive{tagDir("googlebot-news", "nosnippet", "")}},
		{"agent alone sets the scope", []string{"mandelbot:, noindex"}, []Directive{tagDir("mandelbot", "noindex", "")}},
		{"unknown directives kept", []string{"noai, noimageai, frobnicate"},
			[]Directive{tagDir("", "noai", ""), tagDir("", "noimageai", ""), tagDir("", "frobnicate", "")}},
		{"known flag with colon is not an agent", []string{"noindex: yes"}, []Directive{tagDir("", "noindex", "yes")}},
		{"non-token before colon is not an agent", []string{"foo bar: noindex"}, []Directive{tagDir("", "foo bar", "noindex")}},
		{"empty elements and whitespace", []string{" , noindex ,, \t", ""}, []Directive{tagDir("", "noindex", "")}},
		{"no headers", nil, nil},
		{"colon only", []string{":"}, nil},
		{"unknown value directive is not an agent", []string{"max-foo: 3, noindex"},
			[]Directive{tagDir("", "max-foo", "3"), tagDir("", "noindex", "")}},
		{"unavailable-after spelling is not an agent", []string{"unavailable-after: Friday, 25-Jun-10 15:00:00 GMT, noarchive"},
			[]Directive{tagDir("", "unavailable-after", "Friday, 25-Jun-10 15:00:00 GMT"), tagDir("", "noarchive", "")}},
		{"agent before an unknown value directive's value", []string{"googlebot: max-foo: 3"},
			[]Directive{tagDir("", "googlebot", "max-foo: 3")}},
		{"agent then known directive with value", []string{"googlebot: max-snippet:20"},
			[]Directive{tagDir("googlebot", "max-snippet", "20")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseXRobotsTag(tt.values)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseXRobotsTag(%q)\n got %v\nwant %v", tt.values, got, tt.want)
			}
		})
	}
}

func TestParseMetaRobots(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []Directive
	}{
		// Every meta example of the seed's Robot Tags page.
		{"seed robots noindex", `<html><head><meta name="robots" content="noindex" /></head><body></body></html>`,
			[]Directive{tagDir("", "noindex", "")}},
		{"seed mandelbot noindex", `<html><head><meta name="mandelbot" content="noindex" /></head></html>`,
			[]Directive{tagDir("mandelbot", "noindex", "")}},
		{"seed nofollow,noindex,noarchive", `<head><meta name="robots" content="nofollow,noindex,noarchive" /></head>`,
			[]Directive{tagDir("", "nofollow", ""), tagDir("", "noindex", ""), tagDir("", "noarchive", "")}},
		{"seed none", `<head><meta name="robots" content="none" /></head>`, []Directive{tagDir("", "none", "")}},

		{"not self-closing", `<head><meta name="robots" content="noindex"></head>`, []Directive{tagDir("", "noindex", "")}},
		{"uppercase NAME and CONTENT", `<HEAD><META NAME="ROBOTS" CONTENT="NOINDEX, NoFollow"></HEAD>`,
			[]Directive{tagDir("", "noindex", ""), tagDir("", "nofollow", "")}},
		{"uppercase agent name", `<head><meta content="noindex" name="MandelBot"></head>`,
			[]Directive{tagDir("mandelbot", "noindex", "")}},
		{"unquoted attributes", `<head><meta name=robots content=noindex></head>`, []Directive{tagDir("", "noindex", "")}},
		{"non-crawler metas with token names", `<head><meta name="google-site-verification" content="abc123XYZ">` +
			`<meta name="msapplication-TileColor" content="#da532c"><meta name="twitter:card" content="summary">` +
			`<meta name="googlebot" content="noindex, frobnicate"><meta name="bingbot" content="max-snippet: 5, noarchive"></head>`,
			[]Directive{tagDir("bingbot", "max-snippet", "5"), tagDir("bingbot", "noarchive", "")}},
		{"robots meta keeps unknown directives", `<head><meta name="robots" content="frobnicate, noindex"></head>`,
			[]Directive{tagDir("", "frobnicate", ""), tagDir("", "noindex", "")}},
		{"hyphenated agent", `<head><meta name="googlebot-news" content="nosnippet"></head>`,
			[]Directive{tagDir("googlebot-news", "nosnippet", "")}},
		{"multiple metas", `<!DOCTYPE html><html><head><title>t</title>
			<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
			<meta name="description" content="none of your business">
			<meta name="robots" content="max-snippet:20, noarchive">
			<meta name="mandelbot" content="noindex">
			<meta property="og:title" content="noindex">
			<meta http-equiv="X-Robots-Tag" content="noindex">
			</head><body>x</body></html>`,
			[]Directive{tagDir("", "max-snippet", "20"), tagDir("", "noarchive", ""), tagDir("mandelbot", "noindex", "")}},
		{"empty content", `<head><meta name="robots" content=""><meta name="robots"></head>`, nil},
		{"entities in content", `<head><meta name="robots" content="noindex&#44;nofollow"></head>`,
			[]Directive{tagDir("", "noindex", ""), tagDir("", "nofollow", "")}},
		{"first duplicate attribute wins", `<head><meta name="robots" name="x" content="noindex" content="all"></head>`,
			[]Directive{tagDir("", "noindex", "")}},
		{"meta in body ignored", `<html><head><title>x</title></head><body><meta name="robots" content="noindex"></body></html>`, nil},
		{"meta after body start ignored without head", `<html><body><meta name="robots" content="noindex">`, nil},
		// The HTML parser puts a meta between </head> and the body's first
		// content in the head (the "after head" insertion mode).
		{"meta after </head> before the body counts", `<head></head><meta name="robots" content="noindex">`,
			[]Directive{tagDir("", "noindex", "")}},
		{"meta after </head>, a comment and a link counts", "<html><head><title>x</title></head>\n<!-- c --><link rel=x>" +
			`<meta name="robots" content="noindex"><body>hi</body></html>`, []Directive{tagDir("", "noindex", "")}},
		{"meta after </head> and text ignored", `<head></head>hi<meta name="robots" content="noindex">`, nil},
		{"meta after </head> and a div ignored", `<head></head><div><meta name="robots" content="noindex">`, nil},
		{"head start tag omitted", `<!doctype html><title>x</title><meta name="robots" content="noindex"><p>hi`,
			[]Directive{tagDir("", "noindex", "")}},
		{"meta in script or comment ignored", `<head><script>document.write('<meta name="robots" content="noindex">')</script>
			<!-- <meta name="robots" content="nofollow"> --></head>`, nil},
		{"malformed: truncated tag", `<head><meta name="robots" content="noindex"><meta name="robots" cont`,
			[]Directive{tagDir("", "noindex", "")}},
		{"malformed: unclosed quote", `<head><meta name="robots" content="noindex></head><body>`, nil},
		{"malformed: garbage", "\x00<<>><meta/name=robots content=noindex >\xff</", []Directive{tagDir("", "noindex", "")}},
		{"look-alike tag names", `<head><metadata name="robots" content="nofollow"><bodyguard></bodyguard>` +
			`<meta name="robots" content="noindex"></HEAD ><BODY ><meta name="robots" content="noarchive">`,
			[]Directive{tagDir("", "noindex", "")}},
		{"not HTML at all", "%PDF-1.7 noindex", nil},
		{"empty document", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMetaRobots(strings.NewReader(tt.html))
			if err != nil {
				t.Fatalf("ParseMetaRobots: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseMetaRobots(%q)\n got %v\nwant %v", tt.html, got, tt.want)
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestParseMetaRobotsStopsAtHead(t *testing.T) {
	head := `<html><head><meta name="robots" content="noindex"></head>`
	doc := head + "<body>" + strings.Repeat("x", 1<<20) + "</body></html>"
	// One byte at a time, so the count shows exactly what was consumed.
	cr := &countingReader{r: iotest.OneByteReader(strings.NewReader(doc))}
	got, err := ParseMetaRobots(cr)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Directive{tagDir("", "noindex", "")}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if cr.n != len(head)+len("<body>") {
		t.Errorf("read %d bytes, want exactly the %d bytes up to <body>", cr.n, len(head)+len("<body>"))
	}
}

func TestParseMetaRobotsLimit(t *testing.T) {
	// The meta lies past the limit: never seen, and no more than the limit read.
	doc := "<head>" + strings.Repeat("<!-- pad -->", 1000) + `<meta name="robots" content="noindex"></head>`
	cr := &countingReader{r: strings.NewReader(doc)}
	got, err := ParseMetaRobots(io.LimitReader(cr, 4096))
	if err != nil {
		t.Fatal(err)
	}
	if got != nil {
		t.Errorf("got %v, want nothing past the limit", got)
	}
	if cr.n > 4096 {
		t.Errorf("read %d bytes past a 4096-byte limit", cr.n)
	}
}

func TestParseMetaRobotsReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`<head><meta name="robots" content="noindex">`), iotest.ErrReader(boom))
	got, err := ParseMetaRobots(r)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want it to wrap %v", err, boom)
	}
	if want := []Directive{tagDir("", "noindex", "")}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (directives before the error)", got, want)
	}
}

func TestForAgent(t *testing.T) {
	all := ParseXRobotsTag([]string{"noarchive, mandelbot: noindex", "googlebot: none", "max-snippet: 20"})
	tests := []struct {
		agent string
		want  []Directive
	}{
		{"Mandelbot", []Directive{tagDir("", "noarchive", ""), tagDir("mandelbot", "noindex", ""), tagDir("", "max-snippet", "20")}},
		{"MANDELBOT/2.1 (+https://www.fractle.com/)", []Directive{tagDir("", "noarchive", ""), tagDir("mandelbot", "noindex", ""), tagDir("", "max-snippet", "20")}},
		{"googlebot", []Directive{tagDir("", "noarchive", ""), tagDir("googlebot", "noindex", ""), tagDir("googlebot", "nofollow", ""), tagDir("", "max-snippet", "20")}},
		{"otherbot", []Directive{tagDir("", "noarchive", ""), tagDir("", "max-snippet", "20")}},
		{"", []Directive{tagDir("", "noarchive", ""), tagDir("", "max-snippet", "20")}},
		{"mandel", []Directive{tagDir("", "noarchive", ""), tagDir("", "max-snippet", "20")}}, // no prefix match
	}
	for _, tt := range tests {
		if got := forAgent(all, tt.agent); !slices.Equal(got, tt.want) {
			t.Errorf("forAgent(%q)\n got %v\nwant %v", tt.agent, got, tt.want)
		}
	}

	// The seed: "mandelbot: noindex" applies only to Mandelbot; "none" expands.
	seed := ParseXRobotsTag([]string{"mandelbot: noindex"})
	if got := forAgent(seed, "Mandelbot"); !slices.Contains(got, tagDir("mandelbot", "noindex", "")) {
		t.Errorf("mandelbot: noindex not applied to Mandelbot: %v", got)
	}
	if got := forAgent(seed, "Googlebot"); len(got) != 0 {
		t.Errorf("mandelbot: noindex applied to Googlebot: %v", got)
	}
	metaNone, _ := ParseMetaRobots(strings.NewReader(`<meta name="robots" content="none">`))
	if got, want := forAgent(metaNone, "Mandelbot"), []Directive{tagDir("", "noindex", ""), tagDir("", "nofollow", "")}; !slices.Equal(got, want) {
		t.Errorf("none: got %v, want %v", got, want)
	}
}

func TestDirectiveString(t *testing.T) {
	for _, tt := range []struct {
		d    Directive
		want string
	}{
		{tagDir("", "noindex", ""), "noindex"},
		{tagDir("", "max-snippet", "20"), "max-snippet: 20"},
		{tagDir("mandelbot", "unavailable_after", "25 Jun 2010 15:00:00 PST"), "mandelbot: unavailable_after: 25 Jun 2010 15:00:00 PST"},
	} {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.d, got, tt.want)
		}
		// String round-trips through the header parser.
		if got := ParseXRobotsTag([]string{tt.d.String()}); !slices.Equal(got, []Directive{tt.d}) {
			t.Errorf("ParseXRobotsTag(%q) = %v, want [%v]", tt.d.String(), got, tt.d)
		}
	}
}

func FuzzParseTags(f *testing.F) {
	f.Add(`<head><meta name="robots" content="noindex"></head>`)
	f.Add("googlebot: noindex, unavailable_after: Friday, 25-Jun-10 15:00:00 GMT")
	f.Fuzz(func(t *testing.T, s string) {
		ds := ParseXRobotsTag([]string{s})
		for _, x := range ds {
			if x.Name == "" || x.Name != strings.ToLower(x.Name) || x.Agent != strings.ToLower(x.Agent) {
				t.Fatalf("bad directive %#v from %q", x, s)
			}
		}
		ms, err := ParseMetaRobots(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		_ = forAgent(append(ds, ms...), "Mandelbot")
	})
}

// TestParseHeadEnded: Ended tells a head that ended (explicitly, or as
// the HTML parser ends it at the first start tag or text a head cannot
// hold) from input that stopped inside the head.
func TestParseHeadEnded(t *testing.T) {
	for doc, want := range map[string]bool{
		"<html><head><title>t</title></head>":                 false, // a meta could still follow
		"<html><head><title>t</title></head>\n<body>":         true,
		"<html><head><title>t</title></head><p>":              true,
		"<html><head><title>t</title><body>":                  true,
		"<title>t</title><p>text":                             true,
		"<head><meta charset=utf-8>text":                      true,
		"<html><head><title>a <p> title</title>":              false,
		"<html><head><script>if (a < b) { x() }</script>":     false,
		"<html><head>\n  <link rel=x>\n  <!-- comment -->\n ": false,
		"<html><head><meta name=robots content=noindex":       false,
		"<html><head><style>p { color: red }</style><div>":    true,
	} {
		h, err := ParseHead(strings.NewReader(doc))
		if err != nil || h.Ended != want {
			t.Errorf("%q: ended %v (%v), want %v", doc, h.Ended, err, want)
		}
	}
}
