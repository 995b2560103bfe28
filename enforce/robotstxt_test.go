package enforce

import (
	"context"
	"net/url"
	"testing"
)

// TestRobotsTxtExemptOnlyExactly: only "/robots.txt" spelled so, with no
// query, is exempt from the rules; every other spelling is decided.
func TestRobotsTxtExemptOnlyExactly(t *testing.T) {
	v := newEnv(t, serve(200, "User-agent: *\nDisallow: /\n"), Config{})
	if d := v.decide("/robots.txt", 0); !d.Allowed || d.Reason != ReasonRobotsTxt {
		t.Fatalf("/robots.txt: %+v", d)
	}
	decide := func(p string) Decision {
		t.Helper()
		u, err := url.Parse(v.o.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		return v.e.Decide(context.Background(), u, "", DecideOptions{})
	}
	for _, p := range []string{
		"/robots.txt?x=1", "/robots.txt?", "/robots.txt?robots.txt",
		"/ROBOTS.TXT", "/Robots.txt", "/robots.txt;x", "/robots.txt/",
		"//robots.txt", "/./robots.txt", "/x/../robots.txt",
	} {
		if d := decide(p); d.Allowed || d.Reason != ReasonDisallowed {
			t.Errorf("%s: %v %s, want disallowed by the rules", p, d.Allowed, d.Reason)
		}
	}
	// Escapes of unreserved characters spell /robots.txt itself (RFC 3986
	// §6.2.2.2): they are not exempt, and RFC 9309 §2.2.2's implicit
	// allowance of /robots.txt does not open them either: the rules decide.
	for _, p := range []string{"/%72obots.txt", "/robots%2Etxt", "/robots%2etxt", "/robots.tx%74"} {
		if d := decide(p); d.Allowed || d.Reason != ReasonDisallowed {
			t.Errorf("%s: %v %s, want disallowed by the rules", p, d.Allowed, d.Reason)
		}
	}
	// Only GET and HEAD ("" is GET) of /robots.txt are exempt.
	u0, _ := url.Parse(v.o.srv.URL + "/robots.txt")
	for m, exempt := range map[string]bool{"": true, "GET": true, "HEAD": true, "PUT": false, "DELETE": false, "POST": false, "get": false} {
		d := v.e.Decide(context.Background(), u0, "", DecideOptions{Method: m})
		if got := d.Reason == ReasonRobotsTxt; got != exempt || d.Allowed != exempt {
			t.Errorf("%q /robots.txt: %v %s, want exempt %v", m, d.Allowed, d.Reason, exempt)
		}
	}
	// Opaque URLs are never the robots.txt file.
	u := &url.URL{Scheme: "http", Host: v.o.srv.Listener.Addr().String(), Opaque: "/robots.txt"}
	if d := v.e.Decide(context.Background(), u, "", DecideOptions{}); d.Reason == ReasonRobotsTxt {
		t.Errorf("opaque: %+v", d)
	}
}
