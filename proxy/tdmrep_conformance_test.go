package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/proxy/answer"
)

// tdmConfCase is a case of robots/tdmrep/testdata/conformance.json.
type tdmConfCase struct {
	Name        string              `json:"name"`
	Source      string              `json:"source"`
	Kind        string              `json:"kind"`
	File        string              `json:"file"`
	URL         string              `json:"url"`
	Header      map[string][]string `json:"header"`
	HTML        string              `json:"html"`
	Reservation string              `json:"reservation"`
	Policy      string              `json:"policy"`
}

// TestTDMRepConformanceThroughProxy decides every tdmrep.json, header
// and HTML case of the TDMRep conformance data through the real proxy in
// enforce mode: reserved URLs are refused (the policy in the 403), the
// others forwarded, annotated with their reservation.
func TestTDMRepConformanceThroughProxy(t *testing.T) {
	b, err := os.ReadFile("../robots/tdmrep/testdata/conformance.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []tdmConfCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	p := startUsageProxy(t, tdmEnforce)
	origins := map[string]*tdmOrigin{} // by tdmrep.json body
	n := 0
	for _, c := range cs {
		var target string
		switch c.Kind {
		case "file":
			o := origins[c.File]
			if o == nil {
				o = newTDMOrigin(t, 0, c.File, false)
				origins[c.File] = o
			}
			u, err := url.Parse(c.URL)
			if err != nil {
				t.Fatal(err)
			}
			if u.Path == "/robots.txt" {
				continue // exempt in the proxy: a crawler needs it to obey the site
			}
			target = o.URL + u.RequestURI()
		case "header", "meta":
			target = newTDMServing(t, c).URL + "/page"
		default:
			continue // EPUB/PDF and policies: read by no HTTP step (robots/tdmrep tests them)
		}
		n++
		t.Run(c.Name, func(t *testing.T) { checkTDMConformance(t, p, c, target) })
	}
	if n < 30 {
		t.Fatalf("only %d cases through the proxy", n)
	}
}

// newTDMServing starts an origin answering /page with c's header fields
// and HTML, robots.txt allowing all and 404 for tdmrep.json.
func newTDMServing(t *testing.T, c tdmConfCase) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		case "/page":
		default:
			http.NotFound(w, r)
			return
		}
		for k, vs := range c.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if c.HTML != "" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, c.HTML)
			return
		}
		io.WriteString(w, "origin body")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func checkTDMConformance(t *testing.T, p *usageProxy, c tdmConfCase, target string) {
	resp, body := get(t, p.client(nil), target)
	got := resp.Header.Get(HeaderTDM)
	switch c.Reservation {
	case "1":
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" ||
			c.Policy != "" && !strings.Contains(body, "tdm-policy: "+c.Policy) {
			t.Fatalf("%s (%s): %d %v\n%s", c.Name, c.Source, resp.StatusCode, resp.Header, body)
		}
	case "0":
		if resp.StatusCode != 200 || !strings.HasPrefix(got, "0; source=") || strings.Contains(got, "policy") {
			t.Fatalf("%s (%s): %d %q", c.Name, c.Source, resp.StatusCode, got)
		}
	default:
		if resp.StatusCode != 200 || got != "" {
			t.Fatalf("%s (%s): %d %q", c.Name, c.Source, resp.StatusCode, got)
		}
	}
}
