package enforce

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
)

// TestPathParamAndBackslashSpellings checks the spellings that servers
// resolve to a disallowed path: path parameters (Tomcat, Jetty),
// backslashes (IIS), escaped semicolons and their combinations with dot
// segments.
func TestPathParamAndBackslashSpellings(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nAllow: /public\nDisallow: /private\nDisallow: /exact$\n"), Config{})
	v.decide("/", 1)
	ctx := context.Background()
	for _, p := range []string{
		"/;x/private",
		"/;jsessionid=1/private",
		"/;/private",
		"/%3Bx/private",
		"/%3bjsessionid=1/private",
		"/\\private",
		"/%5Cprivate",
		"/%5cprivate",
		"/public\\..\\private",
		"/public%5C..%5cprivate",
		"/%2e%2e/;x/%5Cprivate",
		"/%2E%2e/%3BX/%5cprivate?q=1",
		"/public;a=b/..;/;x/private",
		"/exact;jsessionid=1",
		"/exact%3Bx",
		"/ex;a/../exact",
	} {
		d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{})
		if d.Allowed || d.Reason != ReasonDisallowed || !strings.Contains(d.Detail, "normalised path /") {
			t.Errorf("%s: %+v", p, d)
		}
	}
	for _, p := range []string{
		"/public;x",
		"/public;x/private",
		"/public\\x",
		"/public?x=;/private",
		"/publ;x/ic/private",
		"/exact/x",
		"/exact?x",
	} {
		if d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{}); !d.Allowed {
			t.Errorf("%s: %+v", p, d)
		}
	}
}

// TestReservedEscapeSpellings checks that an escaped reserved character,
// which RFC 9309 matching keeps distinct from the character, cannot slip
// past a rule written with the character: the decoded spelling is decided
// too. It also covers the conformance case rfc9309/2.2.2-figure-4/2, whose
// verdict the robots package leaves to this check.
func TestReservedEscapeSpellings(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nDisallow: /a/b\nDisallow: /foo/bar?baz=https://foo.bar\n"+
		"Disallow: /http%3A%2F%2Fexample.org\nDisallow: /*%2Fz\n"), Config{})
	v.decide("/", 1)
	ctx := context.Background()
	for _, p := range []string{
		"/a%2Fb",
		"/a%2fb",
		"/%61%2F%62",
		"/foo/bar?baz=https%3A%2F%2Ffoo.bar",
		"/foo%2Fbar?baz=https:%2f/foo.bar",
		"/a%2F%2e%2Fb",
	} {
		d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{})
		if d.Allowed || !strings.Contains(d.Detail, "normalised path") {
			t.Errorf("%s: %+v", p, d)
		}
	}
	for _, p := range []string{"/http%3A%2F%2Fexample.org/x", "/y%2Fz", "/y%2fz"} {
		if d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{}); d.Allowed || d.Detail != "" {
			t.Errorf("%s: %+v", p, d)
		}
	}
	for _, p := range []string{"/http://example.org", "/http:%2F%2Fexample.org", "/y/z", "/a%252Fb"} {
		if d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{}); !d.Allowed {
			t.Errorf("%s: %+v", p, d)
		}
	}
}

func TestSpellings(t *testing.T) {
	for in, want := range map[string][]string{
		"/a":                     nil,
		"/;x/private":            {"/private", "//private"},
		"/%2e%2e/;x/%5Cprivate":  {"/;x/%5Cprivate", "/private", "/../;x/\\private", "/%2e%2e//%5Cprivate", "/%2e%2e/;x//private"},
		"/a%2Fb?q=%3D%25%0A":     {"/a/b?q=%3D%25%0A", "/a/b?q==%25\n"},
		"/a%3Bb/c":               {"/a/c", "/a;b/c"},
		"*%2F":                   {"*/"},
		"/a;b/c%5C?x=;y%5C":      {"/a/c/?x=;y\\", "/a;b/c\\?x=;y\\", "/a/c%5C?x=;y%5C", "/a;b/c/?x=;y%5C"},
		"/a%25%32%65%25%32%65/b": {"/a%252e%252e/b"},
	} {
		var got []string
		for _, s := range spellings(in) {
			got = append(got, s.path)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("spellings(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShown(t *testing.T) {
	if got := shown("/a\nb c\x7fé"); got != "/a%0Ab%20c%7F%C3%A9" {
		t.Errorf("shown = %q", got)
	}
	if s := "/plain?x=1"; shown(s) != s {
		t.Errorf("shown(%q) = %q", s, shown(s))
	}
}

// The reference spellings below are written independently of spelling.go,
// as plainly as possible, for FuzzDecideSpellings.

func refUnescape(s string, keep25 bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil && !(keep25 && n == 0x25) {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func refDropParams(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return strings.Join(segs, "/")
}

func refRemoveDots(path string) string {
	var stack []string
	segs := strings.Split(path, "/")[1:]
	for i, s := range segs {
		name, _, _ := strings.Cut(s, ";")
		switch {
		case name == "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case name != "." && s != "":
			stack = append(stack, s)
			continue
		}
		if i == len(segs)-1 {
			stack = append(stack, "")
		}
	}
	if len(stack) == 0 {
		return "/"
	}
	return "/" + strings.Join(stack, "/")
}

// refSpellings returns p and every spelling of it robotsgate considers.
func refSpellings(p string) []string {
	path, query, hasQuery := strings.Cut(p, "?")
	if hasQuery {
		query = "?" + query
	}
	out := []string{p, refUnescape(p, true)}
	if !strings.HasPrefix(path, "/") {
		return out
	}
	dotsAndSlashes := strings.NewReplacer("%2e", ".", "%2E", ".", "%2f", "/", "%2F", "/")
	backslashes := strings.NewReplacer(`\`, "/", "%5c", "/", "%5C", "/")
	resolved := refDropParams(refUnescape(refDropParams(path), true))
	resolved = refRemoveDots(strings.ReplaceAll(resolved, `\`, "/"))
	return append(out,
		refRemoveDots(dotsAndSlashes.Replace(path))+query,
		resolved+refUnescape(query, true),
		refDropParams(path)+query,
		backslashes.Replace(path)+query,
	)
}

type bodyFetcher string

func (b bodyFetcher) Fetch(context.Context, string) FetchResult {
	return FetchResult{Status: StatusOK, HTTPStatus: 200, Body: []byte(b)}
}

// FuzzDecideSpellings checks, for any request target a server accepts
// and any rules, that Decide refuses exactly when the rules disallow one
// of the spellings of the path robotsgate considers (refSpellings): as
// sent (RFC 9309-normalised by robots), cleaned, resolved, decoded,
// parameters dropped, backslashes as slashes. rulesText holds one rule
// per line ("A..." an Allow, else a Disallow); unless pick is 0, a
// Disallow of a prefix of one of the target's spellings (chosen by pick)
// is added, so that many inputs have a spelling that is disallowed.
func FuzzDecideSpellings(f *testing.F) {
	f.Add("D/private\nA/public", "/;x/private", byte(0))
	f.Add("D/private$", "/private;jsessionid=1", byte(0))
	f.Add("D/private", "/%2e%2e/;x/%5Cprivate", byte(0))
	f.Add("D/a/b", "/a%2fb", byte(0))
	f.Add("D/*%2F*", "/a/b//c", byte(0))
	f.Add("D/http%3A%2F%2Fexample.org", "/http://example.org", byte(0))
	f.Add("D/x\nA/x;", "/x%3B/..%5C.%2E/x?q=%3F", byte(0))
	f.Add("D/*.pdf$\nA/doc", "/doc;v=1/a.pdf", byte(0))
	f.Add("A/a;", "/a;b/%2e%2E/c%5C;d?e=%2F", byte(0xfb))
	f.Add("A/public", "/public;x/..%5C/private", byte(0x93))
	f.Fuzz(func(t *testing.T, rulesText, target string, pick byte) {
		if len(rulesText) > 400 || len(target) > 200 {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil || u.Opaque != "" || u.Path == "/robots.txt" {
			return // a server refuses the request, or it is always allowed
		}
		u.Scheme, u.Host = "http", "origin.test"
		var body strings.Builder
		body.WriteString("User-agent: bot\n")
		for _, l := range strings.Split(rulesText, "\n") {
			l = strings.Map(func(r rune) rune {
				if r == '\r' || r == '#' || r == 0 {
					return -1
				}
				return r
			}, l)
			if len(l) < 2 {
				continue
			}
			if l[0] == 'A' {
				body.WriteString("Allow: " + l[1:] + "\n")
			} else {
				body.WriteString("Disallow: " + l[1:] + "\n")
			}
		}
		p := u.RequestURI()
		if pick != 0 {
			all := refSpellings(p)
			s := all[int(pick&7)%len(all)]
			s = s[:len(s)*int(pick>>3)/31]
			if pick>>3 == 31 {
				s += "$"
			}
			body.WriteString("Disallow: /" + strings.Map(func(r rune) rune {
				if r == '\r' || r == '\n' || r == '#' || r == 0 {
					return -1
				}
				return r
			}, s) + "\n")
		}
		rules := robots.Parse([]byte(body.String()))
		var blocking string
		for _, s := range refSpellings(p) {
			if !rules.MatchPath("bot", s).Allowed {
				blocking = s
				break
			}
		}
		e, err := New(filled(Config{Fetcher: bodyFetcher(body.String())}))
		if err != nil {
			t.Fatal(err)
		}
		d := e.Decide(context.Background(), u, "bot", DecideOptions{})
		if d.Reason != ReasonAllowed && d.Reason != ReasonDisallowed {
			t.Fatalf("%q: reason %s (%s)", p, d.Reason, d.Detail)
		}
		if d.Allowed != (blocking == "") {
			t.Fatalf("robots.txt:\n%s\ntarget %q (request URI %q): allowed = %v; spelling disallowed: %q (all: %q); detail %q",
				body.String(), target, p, d.Allowed, blocking, refSpellings(p), d.Detail)
		}
	})
}
