package enforce

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// licenseEnv is an env whose origin serves a robots.txt naming
// /license.xml and that license with the status in status (0: 200),
// counting its fetches.
type licenseEnv struct {
	*env
	servedFile
}

// servedFile is a file an origin serves with the status in status (0:
// 200) and the body in body, counting its fetches.
type servedFile struct {
	status  atomic.Int64
	body    atomic.Pointer[string]
	fetches atomic.Int64
}

// serve counts a fetch and writes the status, then contentType when not
// "", then the body.
func (f *servedFile) serve(w http.ResponseWriter, contentType string) {
	f.fetches.Add(1)
	if s := f.status.Load(); s != 0 {
		w.WriteHeader(int(s))
	}
	if contentType != "" {
		w.Header().Set("Content-Type", contentType)
	}
	io.WriteString(w, *f.body.Load())
}

func newLicenseEnv(t *testing.T, body string) *licenseEnv {
	t.Helper()
	v := &licenseEnv{}
	v.body.Store(&body)
	v.env = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "License: http://"+r.Host+"/license.xml\nUser-agent: *\nDisallow: /private\n")
		case "/license.xml":
			v.serve(w, "text/plain") // identified by namespace, not media type
		}
	}, Config{})
	return v
}

// licenses decides path for purposes after the robots.txt decision.
func (v *licenseEnv) licenses(path string, purposes ...aipref.Purpose) LicenseVerdict {
	v.t.Helper()
	u := v.o.url(path)
	v.e.Decide(context.Background(), u, "", DecideOptions{})
	return v.e.Licenses(context.Background(), u, "GET", "", aipref.SetOf(purposes...))
}

const articlesLicense = `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits></license></content>
  <content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content>
</rsl>`

func TestLicensesFetchedAndCached(t *testing.T) {
	v := newLicenseEnv(t, articlesLicense)
	for range 3 {
		if d := v.licenses("/articles/x", aipref.TrainAI); d.State != rsl.Prohibited || d.Use != "ai-train" ||
			d.License != v.o.srv.URL+"/license.xml" || !d.Checked {
			t.Fatalf("%+v", d)
		}
	}
	if d := v.licenses("/articles/x", aipref.Search); d.State != rsl.Permitted {
		t.Fatalf("search: %+v", d)
	}
	// Another spelling of the path is prohibited too.
	if d := v.licenses("/%61rticles/x", aipref.TrainAI); d.State != rsl.Prohibited {
		t.Fatalf("spelling: %+v", d)
	}
	if n := v.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches", n)
	}
	// The license itself and robots.txt are not decided; no purpose: nothing.
	for _, p := range []string{"/license.xml", "/robots.txt"} {
		if d := v.licenses(p, aipref.TrainAI); d.Checked {
			t.Fatalf("%s decided: %+v", p, d)
		}
	}
	if d := v.licenses("/articles/x"); d.Checked {
		t.Fatalf("no purpose: %+v", d)
	}
	v.clock.Advance(25 * time.Hour)
	v.licenses("/articles/x", aipref.TrainAI)
	if n := v.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after expiry", n)
	}
}

// TestLicensesUnknown: a license that cannot be read makes the terms
// unknown, whatever the reason; a copy read before serves while the
// document is unreachable.
func TestLicensesUnknown(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"404":       {404, ""},
		"503":       {503, ""},
		"not rsl":   {0, `<rsl><content url="/"/></rsl>`},
		"malformed": {0, `<rsl xmlns="https://rslstandard.org/rsl"><content>`},
		"too large": {0, `<rsl xmlns="https://rslstandard.org/rsl">` + strings.Repeat(" ", 600<<10) + `</rsl>`},
	} {
		v := newLicenseEnv(t, tc.body)
		v.status.Store(int64(tc.status))
		if d := v.licenses("/a", aipref.TrainAI); !d.Unknown || d.Note == "" || d.State != rsl.None {
			t.Errorf("%s: %+v", name, d)
		}
	}
	v := newLicenseEnv(t, articlesLicense)
	v.licenses("/articles/x", aipref.TrainAI)
	v.status.Store(503)
	v.clock.Advance(25 * time.Hour)
	if d := v.licenses("/articles/x", aipref.TrainAI); d.State != rsl.Prohibited || d.Unknown {
		t.Fatalf("stale copy: %+v", d)
	}
}

func TestLicenseTokenServer(t *testing.T) {
	v := newLicenseEnv(t, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/" server="HTTPS://LS.Example:443/api">
		<license><permits type="usage">all</permits></license></content></rsl>`)
	if d := v.licenses("/a", aipref.Search); d.State != rsl.Required || d.TokenServer != "https://ls.example" {
		t.Fatalf("%+v", d)
	}
}

// TestLicensesSeveralDocuments: every document the crawler's License
// lines name binds (fetched at once); the most restrictive wins, and an
// unreadable one makes a permitted verdict unknown.
func TestLicensesSeveralDocuments(t *testing.T) {
	var fetches atomic.Int64
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			for _, l := range []string{"a", "b", "c"} {
				io.WriteString(w, "License: http://"+r.Host+"/"+l+".xml\n")
			}
		case "/a.xml":
			fetches.Add(1)
			io.WriteString(w, `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">all</permits></license></content></rsl>`)
		case "/b.xml":
			fetches.Add(1)
			io.WriteString(w, articlesLicense)
		case "/c.xml":
			fetches.Add(1)
			w.WriteHeader(503)
		}
	}, Config{})
	lv := func(path string, p aipref.Purpose) LicenseVerdict {
		u := v.o.url(path)
		v.e.Decide(context.Background(), u, "", DecideOptions{})
		return v.e.Licenses(context.Background(), u, "GET", "", aipref.SetOf(p))
	}
	if d := lv("/articles/1", aipref.TrainAI); d.State != rsl.Prohibited || d.License != v.o.srv.URL+"/b.xml" || len(d.Licenses) != 3 {
		t.Fatalf("%+v", d)
	}
	if d := lv("/other", aipref.TrainAI); d.State != rsl.Permitted || !d.Unknown || !strings.Contains(d.Note, "c.xml") {
		t.Fatalf("%+v", d)
	}
	if n := fetches.Load(); n != 3 {
		t.Fatalf("%d fetches", n)
	}
}

// TestLicenseKeyAt: a license on the request's own origin is read as
// served at the request's address, as robots.txt is; one on another host
// is not pinned; the key keeps its document's URL and address.
func TestLicenseKeyAt(t *testing.T) {
	addr := netip.MustParseAddr("192.0.2.1")
	for _, tc := range []struct{ lu, origin, want string }{
		{"https://example.com/l.xml", "https://example.com", "https://example.com/l.xml#rsl-license|192.0.2.1"},
		{"https://EXAMPLE.com:443/l.xml", "https://example.com", "https://EXAMPLE.com:443/l.xml#rsl-license|192.0.2.1"},
		{"https://other.example/l.xml", "https://example.com", "https://other.example/l.xml#rsl-license"},
		{"http://192.0.2.1/l.xml", "http://192.0.2.1", "http://192.0.2.1/l.xml#rsl-license"},
	} {
		key := licenseKeyAt(tc.lu, tc.origin, addr)
		if key.String() != tc.want || key.Doc() != DocLicense {
			t.Errorf("licenseKeyAt(%s, %s) = %q, want %q", tc.lu, tc.origin, key, tc.want)
		}
		pin, pinned := FetchPinOf(withFetchPin(context.Background(), key))
		if key.URL() != tc.lu || pinned != strings.Contains(tc.want, "|") || (pinned && (pin.Addr != addr || pin.Host != "example.com")) {
			t.Errorf("%s: URL %q, pin %+v %v", key, key.URL(), pin, pinned)
		}
	}
	if key := licenseKeyAt("https://example.com/l.xml", "https://example.com", netip.Addr{}); key.String() != "https://example.com/l.xml#rsl-license" {
		t.Errorf("no address: %q", key)
	}
}
