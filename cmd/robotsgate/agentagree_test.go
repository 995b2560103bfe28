package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentReadAlikeEverywhere: for every User-Agent of the crawler
// table (robots/testdata), the proxy, "check" and "check -fetch" read the
// same agent and so apply the same group: each crawler's own group (told
// apart by its rule's line), the * group for a browser.
func TestAgentReadAlikeEverywhere(t *testing.T) {
	b, err := os.ReadFile("../../robots/testdata/crawler_user_agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Crawlers []struct {
			Name        string
			UserAgent   string `json:"user_agent"`
			RobotsToken string `json:"robots_token"`
		}
		Browsers []struct {
			Name      string
			UserAgent string `json:"user_agent"`
		}
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	// One group per crawler token, each on its own line; browsers get *.
	var robots strings.Builder
	seen := map[string]bool{}
	for _, c := range table.Crawlers {
		if !seen[strings.ToLower(c.RobotsToken)] {
			seen[strings.ToLower(c.RobotsToken)] = true
			fmt.Fprintf(&robots, "User-agent: %s\nDisallow: /\n\n", c.RobotsToken)
		}
	}
	robots.WriteString("User-agent: *\nDisallow: /private\n")
	file := writeRobots(t, robots.String())
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots.String())
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(origin.Close)
	proxy := startServe(t, []string{"-audit-log", filepath.Join(t.TempDir(), "audit.log")}, nil)

	type ua struct{ name, value string }
	var uas []ua
	for _, c := range table.Crawlers {
		uas = append(uas, ua{c.Name, c.UserAgent})
	}
	for _, c := range table.Browsers {
		uas = append(uas, ua{c.Name, c.UserAgent})
	}
	u := origin.URL + "/private/x"
	for _, a := range uas {
		if a.value == "" { // no User-Agent: check needs an -agent
			continue
		}
		proxyRule, offline, fetched := threeReadings(t, proxy, file, a.name, a.value, u)
		want := fmt.Sprintf("%s; line %d", offline.Rule, offline.Line)
		if proxyRule != want || fetched.Rule != offline.Rule || fetched.Line != offline.Line {
			t.Errorf("%s (%q): proxy %q, check %q, check -fetch %q line %d", a.name, a.value, proxyRule, want, fetched.Rule, fetched.Line)
		}
	}
}

// rule is the deciding rule and line of a check -json answer.
type rule struct {
	Rule string
	Line int
}

// threeReadings decides u for the User-Agent value: through the proxy
// (its X-Robotsgate-Rule), with check -robots file and with check
// -fetch.
func threeReadings(t *testing.T, proxy *running, file, name, value, u string) (proxyRule string, offline, fetched rule) {
	t.Helper()
	// The proxy: the rule's line in X-Robotsgate-Rule.
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("User-Agent", value)
	resp, err := proxy.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	proxyRule = resp.Header.Get("X-Robotsgate-Rule") // "Disallow: /; line 4"
	// check, offline.
	var outB, errB strings.Builder
	code := runCheck([]string{"-robots", file, "-agent", value, "-json", u}, strings.NewReader(""), &outB, &errB)
	out, errOut := outB.String(), errB.String()
	if code == 2 || json.Unmarshal([]byte(out), &offline) != nil {
		t.Fatalf("%s: check: %d %s %s", name, code, out, errOut)
	}
	// check -fetch.
	code, out, errOut = runCheckFetchTest(t, nil, "", "-agent", value, "-json", u)
	if code == 2 || json.Unmarshal([]byte(out), &fetched) != nil {
		t.Fatalf("%s: check -fetch: %d %s %s", name, code, out, errOut)
	}
	return proxyRule, offline, fetched
}
