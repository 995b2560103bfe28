package enforce

import (
	"context"
	"strings"
	"testing"
)

func TestPathSpellings(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nAllow: /public\nDisallow: /private\n"), Config{})
	v.decide("/", 1)
	ctx := context.Background()
	for _, p := range []string{
		"//private/x",
		"/./private",
		"/public/../private",
		"/public/./../private/x",
		"/%2e%2e/private",
		"/%2E%2E/private",
		"/public/%2e%2e/private",
		"/public/.%2E/private",
		"/public%2F..%2Fprivate",
		"/public%2f..%2fprivate",
		"/public/..;/private",
		"/a/b/../../private",
		"/../../private",
		"/public//..//private",
		"/public/../private?x=1",
	} {
		d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{})
		if d.Allowed || d.Reason != ReasonDisallowed || d.Rule != "Disallow: /private" ||
			!strings.Contains(d.Detail, "normalised path /private") {
			t.Errorf("%s: %+v", p, d)
		}
	}
	for _, p := range []string{
		"/public/./x",
		"/public//x",
		"/.well-known/x",
		"/public/a%2Fb",
		"/public?next=/../private",
		"/public?u=//private",
	} {
		if d := v.e.Decide(ctx, v.o.url(p), "", DecideOptions{}); !d.Allowed || d.Detail != "" {
			t.Errorf("%s: %+v", p, d)
		}
	}
	// The literal spelling still decides first.
	if d := v.e.Decide(ctx, v.o.url("/private/../x"), "", DecideOptions{}); d.Allowed || d.Detail != "" {
		t.Errorf("/private/../x: %+v", d)
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                 "/",
		"//":                "/",
		"/a/b/":             "/a/b/",
		"/a/b/..":           "/a/",
		"/a/b/.":            "/a/b/",
		"/a/./b/../c":       "/a/c",
		"/..":               "/",
		"/a%2E%2e/b":        "/a../b",
		"/a/%2e%2E/b?q=/./": "/b?q=/./",
		"/a%2fb":            "/a/b",
		"/a/..;x=1/b;y":     "/b;y",
		"*":                 "*",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{
		"/public/page.html?a=../b": false,
		"/a.b/c":                   false,
		"/a%20b":                   false,
		"/.x":                      true,
		"//x":                      true,
		"/a%2Eb":                   true,
		"/a%2fb":                   true,
		"/a?b//c":                  false,
		"/a;b":                     true,
		"/;x/private":              true,
		"/a\\b":                    true,
		"/a%5cb":                   true,
		"/a%3Bb":                   true,
		"/a%3a":                    true,
		"/a?q=%2F":                 true,
		"/a?b;c\\d":                false,
		"/caf%C3%A9/%7euser":       false,
		"/a%2541%2A%24%20":         false,
	} {
		if got := needsSpellings(in); got != want {
			t.Errorf("needsSpellings(%q) = %v", in, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { needsSpellings("/public/caf%C3%A9.html?id=42&q=a+b") }); n != 0 {
		t.Errorf("needsSpellings allocates %v times", n)
	}
}
