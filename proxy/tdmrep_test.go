package proxy

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// tdmPolicy is the tdm-policy URL of the TDMRep report's examples.
const tdmPolicy = "https://provider.com/policies/policy.json"

// tdmThreeGroups is the TDMRep report's second tdmrep.json example.
const tdmThreeGroups = `[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1, "tdm-policy": "` + tdmPolicy + `"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]`

// tdmOrigin serves robots.txt (everything allowed), a tdmrep.json of a
// given status and body, and pages that declare TDMRep in their header
// or meta; it counts hits per path.
type tdmOrigin struct {
	*httptest.Server
	robots string
	status int    // of /.well-known/tdmrep.json; 0 = 200
	file   string // its body
	originLog
}

func (o *tdmOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.saw(r)
	h := w.Header()
	switch r.URL.Path {
	case "/robots.txt":
		io.WriteString(w, o.robots)
		return
	case "/.well-known/tdmrep.json":
		if o.status/100 == 3 {
			http.Redirect(w, r, "/moved/tdmrep.json", o.status)
			return
		}
		h.Set("Content-Type", "application/json")
		if o.status != 0 {
			w.WriteHeader(o.status)
		}
		io.WriteString(w, o.file)
		return
	case "/moved/tdmrep.json":
		io.WriteString(w, `[{"location": "/directory-a/", "tdm-reservation": 1}]`)
		return
	case "/hdr-1":
		h.Set("tdm-reservation", "1")
		h.Set("tdm-policy", tdmPolicy)
	case "/hdr-0":
		h.Set("tdm-reservation", "0")
	case "/hdr-bad":
		h.Set("tdm-reservation", "yes")
	case "/meta.html":
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><meta name="tdm-reservation" content="1">`+
			`<meta name="tdm-policy" content="`+tdmPolicy+`"><title>t</title></head><body>origin body</body></html>`)
		return
	case "/meta.gz.html":
		h.Set("Content-Type", "text/html")
		h.Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, `<html><head><meta name="TDM-Reservation" content=" 1 "></head><body>origin body</body></html>`)
		zw.Close()
		return
	case "/echo-range":
		io.WriteString(w, "range="+r.Header.Get("Range"))
		return
	case "/spoof":
		h.Set(HeaderTDM, "0")
	}
	io.WriteString(w, "origin body "+r.URL.Path)
}

// newTDMOrigin starts a plain-HTTP tdmOrigin (tls: over TLS instead).
func newTDMOrigin(t *testing.T, status int, file string, tls bool) *tdmOrigin {
	t.Helper()
	o := &tdmOrigin{robots: "User-agent: *\nAllow: /\nContent-Usage: train-ai=y\n", status: status, file: file}
	if tls {
		o.Server = quietTLSServer(http.HandlerFunc(o.serve))
	} else {
		o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	}
	t.Cleanup(o.Close)
	return o
}

// tdmEnforce is the configuration of a train-ai crawler under
// tdmrep.mode enforce.
func tdmEnforce(c *config.Config) {
	c.Purposes = aipref.SetOf(aipref.TrainAI)
	c.TDMRep.Mode = config.TDMRepEnforce
}

// TestTDMRepFileRefuses: a train-ai crawler is refused before the request
// leaves for a URL tdmrep.json reserves (the 403 and the audit record name
// the policy URL); unreserved and unmatched URLs go, the 0 rule is
// annotated; tdmrep.json is fetched once.
func TestTDMRepFileRefuses(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	p := startUsageProxy(t, tdmEnforce)
	c := p.client(nil)

	resp, body := get(t, c, o.URL+"/directory-b/html/page.html")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" ||
		!strings.Contains(body, "tdm-policy: "+tdmPolicy) || !strings.Contains(body, o.URL+"/.well-known/tdmrep.json") {
		t.Fatalf("reserved with a policy: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if got := resp.Header.Get(HeaderTDM); got != `1; source=tdmrep.json; policy="`+tdmPolicy+`"` {
		t.Fatalf("%s on the 403: %q", HeaderTDM, got)
	}
	resp, body = get(t, c, o.URL+"/directory-a/paper.pdf", "Accept", "application/json")
	var j answer.RefusalBody
	if err := json.Unmarshal([]byte(body), &j); err != nil || resp.StatusCode != 403 || j.Reason != "tdm-reserved" ||
		j.TDM == nil || j.TDM.Reservation != "1" || j.TDM.Source != "tdmrep.json" || !strings.HasPrefix(j.Rule, "rule 1: ") {
		t.Fatalf("JSON refusal: %d %v %s", resp.StatusCode, err, body)
	}
	if o.hit("/directory-b/html/page.html") != 0 || o.hit("/directory-a/paper.pdf") != 0 {
		t.Fatal("the origin saw a reserved URL")
	}
	rec := p.records(t, o.URL+"/directory-b/html/page.html")
	// audit: all: the robots.txt verdict, then the TDMRep refusal.
	if len(rec) != 2 || rec[1]["decision"] != audit.DecisionBlocked || rec[1]["reason"] != "tdm-reserved" {
		t.Fatalf("audit: %v", rec)
	}
	if tdm, _ := rec[1]["tdm"].(map[string]any); tdm["policy"] != tdmPolicy || tdm["reservation"] != "1" || tdm["source"] != "tdmrep.json" {
		t.Fatalf("audit tdm: %v", rec[1])
	}

	resp, _ = get(t, c, o.URL+"/directory-b/images/a.jpg")
	if resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "0; source=tdmrep.json" {
		t.Fatalf("0 rule: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ = get(t, c, o.URL+"/other"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "" {
		t.Fatalf("no rule: %d %v", resp.StatusCode, resp.Header)
	}
	// A spelling of a reserved path that origins read as that path.
	if resp, _ = get(t, c, o.URL+"/x/../directory-a/paper.pdf"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("dot segments: %d", resp.StatusCode)
	}
	if n := o.hit("/.well-known/tdmrep.json"); n != 1 {
		t.Fatalf("tdmrep.json fetched %d times", n)
	}
}

// TestTDMRepFileItselfAllowed: a request for tdmrep.json is allowed even
// when the file reserves every path.
func TestTDMRepFileItselfAllowed(t *testing.T) {
	o := newTDMOrigin(t, 0, `[{"location": "/", "tdm-reservation": 1}]`, false)
	p := startUsageProxy(t, tdmEnforce)
	if resp, body := get(t, p.client(nil), o.URL+"/.well-known/tdmrep.json"); resp.StatusCode != 200 || !strings.Contains(body, `"location"`) {
		t.Fatalf("tdmrep.json itself: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, p.client(nil), o.URL+"/.well-known/tdmrep.json?x"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another spelling of tdmrep.json: %d", resp.StatusCode)
	}
	if resp, _ := get(t, p.client(nil), o.URL+"/"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("/: %d", resp.StatusCode)
	}
}

// TestTDMRepFirstMatch: the first matching rule wins, not the longest.
func TestTDMRepFirstMatch(t *testing.T) {
	open := newTDMOrigin(t, 0, `[{"location": "/a/", "tdm-reservation": 0}, {"location": "/a/private/", "tdm-reservation": 1}]`, false)
	closed := newTDMOrigin(t, 0, `[{"location": "/a/private/", "tdm-reservation": 1}, {"location": "/a/", "tdm-reservation": 0}]`, false)
	p := startUsageProxy(t, tdmEnforce)
	if resp, _ := get(t, p.client(nil), open.URL+"/a/private/x"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "0; source=tdmrep.json" {
		t.Fatalf("0 first: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get(t, p.client(nil), closed.URL+"/a/private/x"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("1 first: %d", resp.StatusCode)
	}
	if resp, _ := get(t, p.client(nil), closed.URL+"/a/public"); resp.StatusCode != 200 {
		t.Fatalf("1 first, /a/public: %d", resp.StatusCode)
	}
}

// TestTDMRepFileStatuses: a missing file (404, 410) and a body that is
// not a rule array reserve nothing; a redirect is followed; an unreadable
// file (5xx, oversize) is unknown: annotated, or refused with
// usage.unknown deny.
func TestTDMRepFileStatuses(t *testing.T) {
	big := "[" + strings.Repeat(`{"location": "/nothing/", "tdm-reservation": 0},`, 12000) + `{"location": "/", "tdm-reservation": 1}]`
	for _, tc := range []struct {
		name   string
		status int
		file   string
		deny   bool
		want   int
		header string
		reason string
	}{
		{"404", 404, "not found", false, 200, "", ""},
		{"410", 410, "gone", true, 200, "", ""},
		{"html-soft-404", 200, "<html>no such page</html>", true, 200, "", ""},
		{"redirect", 301, "", false, 403, `1; source=tdmrep.json`, "tdm-reserved"},
		{"503-allow", 503, "down", false, 200, "unknown; source=tdmrep.json", ""},
		{"503-deny", 503, "down", true, 403, "", "tdm-unknown"},
		{"oversize-deny", 200, big, true, 403, "", "tdm-unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newTDMOrigin(t, tc.status, tc.file, false)
			p := startUsageProxy(t, func(c *config.Config) {
				tdmEnforce(c)
				if tc.deny {
					c.Usage.Unknown = "deny"
				}
			})
			resp, body := get(t, p.client(nil), o.URL+"/directory-a/x")
			if resp.StatusCode != tc.want || resp.Header.Get(HeaderTDM) != tc.header && tc.want == 200 {
				t.Fatalf("%d %v\n%s", resp.StatusCode, resp.Header, body)
			}
			if tc.reason != "" && resp.Header.Get(answer.HeaderDecision) != tc.reason {
				t.Fatalf("reason %q, want %q", resp.Header.Get(answer.HeaderDecision), tc.reason)
			}
			if want := 0; tc.want == 403 && o.hit("/directory-a/x") != want {
				t.Fatal("the origin saw a refused URL")
			}
		})
	}
}

// TestTDMRepResponse: tdm-reservation: 1 in the header or the meta of a
// response refuses it in enforce mode (with the policy in the 403), is
// annotated and audited in report mode; 0 and protocol errors are not
// reservations; an origin's own X-Robotsgate-TDM is removed.
func TestTDMRepResponse(t *testing.T) {
	o := newTDMOrigin(t, 404, "", false)
	e := startUsageProxy(t, tdmEnforce)
	for _, path := range []string{"/hdr-1", "/meta.html"} {
		resp, body := get(t, e.client(nil), o.URL+path)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" ||
			!strings.Contains(body, "tdm-policy: "+tdmPolicy) || strings.Contains(body, "origin body") {
			t.Fatalf("enforce %s: %d %v\n%s", path, resp.StatusCode, resp.Header, body)
		}
	}
	if resp, _ := get(t, e.client(nil), o.URL+"/hdr-0"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "0; source=header" {
		t.Fatalf("/hdr-0: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get(t, e.client(nil), o.URL+"/hdr-bad"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "" {
		t.Fatalf("/hdr-bad: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get(t, e.client(nil), o.URL+"/spoof"); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "" {
		t.Fatalf("/spoof: %d %v", resp.StatusCode, resp.Header)
	}

	// The meta scan runs with robot_tags off, and decodes gzip.
	off := startUsageProxy(t, func(c *config.Config) {
		tdmEnforce(c)
		c.RobotTags.Mode = config.RobotTagsOff
	})
	for _, path := range []string{"/meta.html", "/meta.gz.html"} {
		if resp, body := get(t, off.client(nil), o.URL+path, "Accept-Encoding", "gzip"); resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" {
			t.Fatalf("robot_tags off, %s: %d %v\n%s", path, resp.StatusCode, resp.Header, body)
		}
	}

	r := startUsageProxy(t, func(c *config.Config) { c.Purposes = aipref.SetOf(aipref.TrainAI) }) // tdmrep.mode report
	resp, body := get(t, r.client(nil), o.URL+"/meta.html")
	if resp.StatusCode != 200 || !strings.Contains(body, "origin body") || resp.Header.Get(HeaderTDM) != `1; source=meta; policy="`+tdmPolicy+`"` {
		t.Fatalf("report: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	rec := r.records(t, o.URL+"/meta.html")
	if len(rec) != 2 || rec[1]["decision"] != audit.DecisionReported || rec[1]["reason"] != "tdm-reserved" {
		t.Fatalf("report audit: %v", rec)
	}
}

// TestTDMRepPurposesNotBound: a crawler without a tdmrep.purposes purpose
// is not bound: tdmrep.json is not even fetched, nothing is annotated.
func TestTDMRepPurposesNotBound(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	p := startUsageProxy(t, func(c *config.Config) {
		c.Purposes = aipref.SetOf(aipref.Search)
		c.TDMRep.Mode = config.TDMRepEnforce
	})
	for _, path := range []string{"/directory-a/x", "/hdr-1"} {
		if resp, _ := get(t, p.client(nil), o.URL+path); resp.StatusCode != 200 || resp.Header.Get(HeaderTDM) != "" {
			t.Fatalf("search crawler %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	if n := o.hit("/.well-known/tdmrep.json"); n != 0 {
		t.Fatalf("tdmrep.json fetched %d times", n)
	}
}

// TestTDMRepMITM: the same inside an MITM session: tdmrep.json refuses
// before the request leaves, the header after the response.
func TestTDMRepMITM(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, true)
	origin := &tlsOrigin{Server: o.Server}
	cfg := mitmConfig(t, origin)
	tdmEnforce(&cfg)
	p := startHTTPSProxy(t, cfg)
	c := p.client(p.ca)
	resp, body := get(t, c, o.URL+"/directory-b/html/page.html")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderDecision) != "tdm-reserved" || !strings.Contains(body, tdmPolicy) {
		t.Fatalf("MITM file: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := get(t, c, o.URL+"/hdr-1"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("MITM header: %d", resp.StatusCode)
	}
	if resp, _ := get(t, c, o.URL+"/other"); resp.StatusCode != 200 {
		t.Fatalf("MITM /other: %d", resp.StatusCode)
	}
	if o.hit("/directory-b/html/page.html") != 0 || o.hit("/hdr-1") != 1 {
		t.Fatal("MITM: the origin saw the reserved URL, or not the header one")
	}
}

// TestTDMRepAdminAndMetrics: /v1/decision shows the TDMRep verdict (a
// refusal in enforce mode, with the policy URL), and the verdicts are
// counted by source and reservation, never by origin.
func TestTDMRepAdminAndMetrics(t *testing.T) {
	o := newTDMOrigin(t, 0, tdmThreeGroups, false)
	p := startUsageProxy(t, tdmEnforce)
	c := &http.Client{Timeout: testTimeout}
	resp, err := c.Get("http://" + p.addr + "/v1/decision?purpose=train-ai&url=" + url.QueryEscape(o.URL+"/directory-b/html/p"))
	if err != nil {
		t.Fatal(err)
	}
	var j answer.DecisionJSON
	err = json.NewDecoder(resp.Body).Decode(&j)
	resp.Body.Close()
	if err != nil || j.Allowed || j.Reason != "tdm-reserved" || j.TDM == nil || j.TDM.Policy != tdmPolicy {
		t.Fatalf("/v1/decision: %v %+v", err, j)
	}
	resp, err = c.Get("http://" + p.addr + "/v1/decision?purpose=search&url=" + url.QueryEscape(o.URL+"/directory-b/html/p"))
	if err != nil {
		t.Fatal(err)
	}
	j = answer.DecisionJSON{}
	err = json.NewDecoder(resp.Body).Decode(&j)
	resp.Body.Close()
	if err != nil || !j.Allowed || j.TDM != nil {
		t.Fatalf("/v1/decision for search: %v %+v", err, j)
	}

	get(t, p.client(nil), o.URL+"/directory-a/x")
	get(t, p.client(nil), o.URL+"/directory-b/images/a.jpg")
	get(t, p.client(nil), o.URL+"/hdr-1")
	get(t, p.client(nil), o.URL+"/other")
	m := testsupport.Exposition(p.srv.metrics.Handler())
	assertMetrics(t, m, map[string]float64{
		`robotsgate_decisions_total{decision="blocked",reason="tdm-reserved"}`:   2,
		`robotsgate_tdmrep_verdicts_total{reservation="1",source="tdmrep.json"}`: 1,
		`robotsgate_tdmrep_verdicts_total{reservation="0",source="tdmrep.json"}`: 1,
		`robotsgate_tdmrep_verdicts_total{reservation="1",source="header"}`:      1,
		`robotsgate_tdmrep_verdicts_total{reservation="unset",source="none"}`:    1,
		`robotsgate_tdmrep_verdicts_total{reservation="unknown",source="none"}`:  0,
	})
	if strings.Contains(m, "127.0.0.1") {
		t.Error("a metric names the origin")
	}
}
