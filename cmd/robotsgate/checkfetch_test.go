package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// fetchOrigin is an httptest origin serving robots.txt with status and
// body (gzip-encoded when gz), counting its fetches and the User-Agents
// they came with.
type fetchOrigin struct {
	*httptest.Server
	fetches atomic.Int64
	mu      sync.Mutex
	agents  []string
}

func newFetchOrigin(t *testing.T, status int, body string, gz bool) *fetchOrigin {
	t.Helper()
	o := &fetchOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			t.Errorf("check -fetch requested %s: only robots.txt may be fetched", r.URL)
			return
		}
		o.fetches.Add(1)
		o.mu.Lock()
		o.agents = append(o.agents, r.UserAgent())
		o.mu.Unlock()
		b := []byte(body)
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			b = buf.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(status)
		w.Write(b)
	}))
	t.Cleanup(o.Close)
	return o
}

func runCheckFetchTest(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"check", "-fetch"}, args...), testsupport.EnvMap(env), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestCheckFetchVerdicts decides URLs against live robots.txt files as
// the proxy does: one fetch per origin with robots.user_agent, gzip
// decoded, a 5xx disallowing the whole origin, a 404 allowing it, the
// agent's group, other spellings of a disallowed path, usage preferences
// for the configured purposes, an unreachable origin and a URL robotsgate
// cannot proxy. Exit status 1: some are refused.
func TestCheckFetchVerdicts(t *testing.T) {
	a := newFetchOrigin(t, 200, "User-agent: *\nDisallow: /private\n\nUser-agent: FetchBot\nDisallow: /bot-only\nContent-Usage: /ai/ train-ai=n\n", true)
	down := newFetchOrigin(t, 503, "busy", false)
	none := newFetchOrigin(t, 404, "not found", false)
	dead := "http://" + testsupport.ClosedAddr(t)
	urls := []string{
		a.URL + "/public", a.URL + "/bot-only/x", a.URL + "/%62ot-only/y", a.URL + "/private", a.URL + "/ai/page",
		down.URL + "/anything", down.URL + "/other", none.URL + "/anything", dead + "/x", "ftp://files.example/x",
	}
	env := map[string]string{"ROBOTSGATE_PURPOSE": "train-ai", "ROBOTSGATE_ROBOTS_USER_AGENT": "CheckTest/1.0"}
	code, out, errOut := runCheckFetchTest(t, env, strings.Join(urls, "\n")+"\n# a comment\n\n", "-agent", "FetchBot")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
	}
	want := []string{
		"allowed            " + a.URL + "/public",
		"disallowed         " + a.URL + "/bot-only/x  (Disallow: /bot-only, line 5)",
		"disallowed         " + a.URL + "/%62ot-only/y  (Disallow: /bot-only, line 5",
		"allowed            " + a.URL + "/private",
		"usage-disallowed   " + a.URL + "/ai/page  (Content-Usage: /ai/ train-ai=n, line 6",
		"robots-unreachable " + down.URL + "/anything",
		"robots-unreachable " + down.URL + "/other",
		"allowed            " + none.URL + "/anything  (no robots.txt (HTTP 404 Not Found): all URLs allowed)",
		"origin-unreachable " + dead + "/x",
		"invalid-url        ftp://files.example/x  (want an absolute http or https URL)",
		"",
		"10 URLs of 4 origins checked for FetchBot: 3 allowed, 7 refused (disallowed 2, invalid-url 1, origin-unreachable 1, robots-unreachable 2, usage-disallowed 1)",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d:\n got %q\nwant %q...", i, lines[i], want[i])
		}
	}
	// A one-shot command does not promise a retry.
	if strings.Contains(out, "tried again") || !strings.Contains(out, "this command fetches robots.txt once: run it again later") {
		t.Errorf("the unreachable verdicts speak of a running proxy's retry:\n%s", out)
	}
	for _, o := range []*fetchOrigin{a, down} {
		if n := o.fetches.Load(); n != 1 {
			t.Errorf("robots.txt of %s fetched %d times, want once", o.URL, n)
		}
	}
	if a.agents[0] != "CheckTest/1.0" {
		t.Errorf("robots.txt fetched as %q, want robots.user_agent", a.agents[0])
	}
}

// TestCheckFetchJSON prints, per URL, the answer of /v1/decision, and the
// summary on stderr; exit 0 when every URL is allowed.
func TestCheckFetchJSON(t *testing.T) {
	a := newFetchOrigin(t, 200, "User-agent: *\nDisallow: /private\n", false)
	code, out, errOut := runCheckFetchTest(t, nil, "", "-agent", "Mozilla/5.0 (compatible; JsonBot/2.1)", "-json", a.URL+"/a", a.URL+"/b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for _, p := range []string{"/a", "/b"} {
		var d struct {
			Allowed  bool
			Decision string
			Reason   string
			URL      string
			Origin   string
			Agent    string
			Robots   struct{ Status string }
		}
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%v in %s", err, out)
		}
		if !d.Allowed || d.Decision != "allowed" || d.Reason != "allowed" || d.URL != a.URL+p || d.Origin != a.URL ||
			d.Agent != "JsonBot" || d.Robots.Status != "ok" {
			t.Errorf("decision %+v", d)
		}
	}
	if errOut != "2 URLs of 1 origin checked for JsonBot: 2 allowed, 0 refused\n" {
		t.Errorf("stderr %q", errOut)
	}
}

func TestCheckFetchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"http://x.test/"}, nil, "no agent: give -agent or configure agent"},
		{[]string{"-agent", "A"}, nil, "no URL given"},
		{[]string{"-agent", "A", "-purpose", "train-ai,nope", "http://x.test/"}, nil, "-purpose: "},
		{[]string{"-agent", "A", "-content-use", "most", "http://x.test/"}, nil, `-content-use: unknown content use "most"`},
		{[]string{"-agent", "A", "http://x.test/", "-json"}, nil, `flags must precede URLs: "-json" comes after a URL`},
		{[]string{"-robots", "f", "-agent", "A", "http://x.test/"}, nil, "flag provided but not defined: -robots"},
		{[]string{"http://x.test/"}, map[string]string{"ROBOTSGATE_MODE": "sometimes"}, "ROBOTSGATE_MODE"},
	} {
		code, out, errOut := runCheckFetchTest(t, tc.env, "", tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "robotsgate check: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestCheckFetchUpstreamRoots: an HTTPS origin whose certificate only
// https.upstream_roots trusts is refused as origin-unreachable without
// the setting and decided with it, as the proxy's transport does.
func TestCheckFetchUpstreamRoots(t *testing.T) {
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}))
	o.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	o.StartTLS()
	defer o.Close()
	pemFile := testsupport.WriteFile(t, "origin.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.Certificate().Raw})))
	code, out, _ := runCheckFetchTest(t, nil, "", "-agent", "RootsBot", o.URL+"/private/x")
	if code != 1 || !strings.HasPrefix(out, "origin-unreachable "+o.URL+"/private/x") || !strings.Contains(out, "certificate") ||
		!strings.Contains(out, "add its root CA to https.upstream_roots") || !strings.Contains(out, "-upstream-roots FILE") {
		t.Errorf("without upstream_roots: exit %d, %q; want the proxy's explanation", code, out)
	}
	// The flag, as serve's.
	code, out, errOut := runCheckFetchTest(t, nil, "", "-agent", "RootsBot", "-upstream-roots", pemFile, o.URL+"/private/x")
	if code != 1 || !strings.HasPrefix(out, "disallowed         "+o.URL+"/private/x  (Disallow: /private, line 2)") {
		t.Errorf("with -upstream-roots: exit %d, %q %q", code, out, errOut)
	}
	code, out, _ = runCheckFetchTest(t, map[string]string{"ROBOTSGATE_UPSTREAM_ROOTS": pemFile}, "", "-agent", "RootsBot", o.URL+"/private/x")
	if code != 1 || !strings.HasPrefix(out, "disallowed         "+o.URL+"/private/x  (Disallow: /private, line 2)") {
		t.Errorf("with upstream_roots: exit %d, %q", code, out)
	}
}

// TestCheckFetchManyURLsInOrder: a list longer than one batch is printed
// in input order, with one robots.txt fetch for its origin.
func TestCheckFetchManyURLsInOrder(t *testing.T) {
	a := newFetchOrigin(t, 200, "User-agent: *\nDisallow: /odd/\n", false)
	var in, want strings.Builder
	for i := range checkFetchBatch + 45 {
		u := fmt.Sprintf("%s/even/%d", a.URL, i)
		verdict := "allowed           "
		if i%2 == 1 {
			u = fmt.Sprintf("%s/odd/%d", a.URL, i)
			verdict = "disallowed        "
		}
		in.WriteString(u + "\n")
		want.WriteString(verdict + " " + u)
		if i%2 == 1 {
			want.WriteString("  (Disallow: /odd/, line 2)")
		}
		want.WriteString("\n")
	}
	code, out, errOut := runCheckFetchTest(t, nil, in.String(), "-agent", "ManyBot", "-parallel", "5")
	if code != 1 || !strings.HasPrefix(out, want.String()+"\n") {
		t.Fatalf("exit %d (stderr %q), output:\n%s", code, errOut, out)
	}
	if n := a.fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times", n)
	}
}

// TestCheckFetchPurposeNone: -purpose none decides for no purpose, over
// the configured ones.
func TestCheckFetchPurposeNone(t *testing.T) {
	a := newFetchOrigin(t, 200, "User-agent: *\nContent-Usage: train-ai=n\n", false)
	env := map[string]string{"ROBOTSGATE_PURPOSE": "train-ai", "ROBOTSGATE_AGENT": "ConfBot"}
	if code, out, _ := runCheckFetchTest(t, env, "", a.URL+"/p"); code != 1 || !strings.HasPrefix(out, "usage-disallowed ") || !strings.Contains(out, "checked for ConfBot") {
		t.Errorf("configured purposes and agent: exit %d, %q", code, out)
	}
	if code, out, _ := runCheckFetchTest(t, env, "", "-purpose", "none", a.URL+"/p"); code != 0 || !strings.HasPrefix(out, "allowed ") {
		t.Errorf("-purpose none: exit %d, %q", code, out)
	}
}

// TestCheckFetchUsageUnknown: usage.unknown of the configuration decides
// a declared purpose robots.txt states nothing for, as in the proxy.
func TestCheckFetchUsageUnknown(t *testing.T) {
	a := newFetchOrigin(t, 200, "User-agent: *\nAllow: /\n", false)
	for unknown, want := range map[string]string{"allow": "allowed ", "deny": "usage-disallowed "} {
		conf := testsupport.WriteFile(t, "usage.yaml", "usage:\n  unknown: "+unknown+"\n")
		env := map[string]string{"ROBOTSGATE_PURPOSE": "train-ai", "ROBOTSGATE_AGENT": "ConfBot"}
		if _, out, errOut := runCheckFetchTest(t, env, "", "-config", conf, a.URL+"/p"); !strings.HasPrefix(out, want) {
			t.Errorf("usage.unknown %s: %q (stderr %q), want %q", unknown, out, errOut, want)
		}
	}
}

// TestCheckFetchSiteExceptions: the per-site exceptions of the
// configuration apply as in the proxy: deny refuses without fetching
// robots.txt, allow lets through what robots.txt refuses, with its note.
func TestCheckFetchSiteExceptions(t *testing.T) {
	denied := newFetchOrigin(t, 200, "User-agent: *\nAllow: /\n", false)
	partner := newFetchOrigin(t, 200, "User-agent: *\nDisallow: /\n", false)
	conf := testsupport.WriteFile(t, "sites.yaml", "sites:\n  - match: "+denied.URL+"\n    policy: deny\n  - match: "+partner.URL+"\n    policy: allow\n    note: \"written permission, ticket 7\"\n")
	code, out, errOut := runCheckFetchTest(t, nil, "", "-config", conf, "-agent", "SiteBot", denied.URL+"/a", partner.URL+"/b")
	if code != 1 || !strings.HasPrefix(out, "site-denied        "+denied.URL+"/a") ||
		!strings.Contains(out, "allowed            "+partner.URL+"/b  (Disallow: /, line 2; robots.txt refuses the URL (disallowed)") || !strings.Contains(out, "written permission, ticket 7") {
		t.Fatalf("exit %d (stderr %q), output:\n%s", code, errOut, out)
	}
	if n := denied.fetches.Load(); n != 0 {
		t.Errorf("robots.txt of the denied site fetched %d times", n)
	}
}
