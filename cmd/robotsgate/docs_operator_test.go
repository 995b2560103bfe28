package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeAuditRecordMatchesServe: the README's audit record has the
// fields a real record of the same refusal has, no more, no fewer.
func TestReadmeAuditRecordMatchesServe(t *testing.T) {
	var readme map[string]any
	for _, l := range strings.Split(string(readRepoFile(t, "README.md")), "\n") {
		if strings.HasPrefix(l, `{"time":`) {
			if err := json.Unmarshal([]byte(l), &readme); err != nil {
				t.Fatalf("README audit record: %v", err)
			}
		}
	}
	if readme == nil {
		t.Fatal("README shows no audit record")
	}
	origin, _ := newTestOrigin(t, nil)
	path := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, []string{"-audit-log", path}, nil)
	req, _ := http.NewRequest(http.MethodGet, origin.URL+"/private/x", nil)
	req.Header.Set("User-Agent", "curl/8.5.0")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r.stop(t)
	recs := readAudit(t, path)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if got, want := keys(readme), keys(recs[0]); !slices.Equal(got, want) {
		t.Errorf("README audit record fields %v, a real record's %v", got, want)
	}
}

// TestDocsRefusalLabels: the refusal bodies the docs show use only the
// labels robotsgate's text body writes (the text body is written in
// proxy/answer/*.go with labels padded to one column).
func TestDocsRefusalLabels(t *testing.T) {
	known := map[string]bool{}
	srcs, _ := filepath.Glob(filepath.Join(repoRoot, "proxy", "answer", "*.go"))
	label := regexp.MustCompile(`(?:Fprintf\(&?sb, |WriteString\()"([a-z][a-z_-]*): +`)
	for _, f := range srcs {
		b, _ := os.ReadFile(f)
		for _, m := range label.FindAllSubmatch(b, -1) {
			known[string(m[1])] = true
		}
	}
	if !known["reason"] || !known["url"] {
		t.Fatalf("labels of the text body not found in proxy/answer/*.go: %v", known)
	}
	docLabel := regexp.MustCompile(`^\s*([a-z][a-z_-]*):\s{2,}\S`)
	for _, f := range append([]string{"README.md"}, docFiles(t)...) {
		_, code := proseLines(readRepoFile(t, f))
		in := false
		for _, l := range code {
			if strings.Contains(l, "robotsgate: forbidden by") {
				in = true
				continue
			}
			m := docLabel.FindStringSubmatch(l)
			switch {
			case in && m != nil && !known[m[1]]:
				t.Errorf("%s: refusal body shows %q, which robotsgate never writes: %s", f, m[1], l)
			case in && m == nil && strings.TrimSpace(l) != "":
				in = false
			}
		}
	}
}

// TestReloadDocsOneInstance: no command in the docs signals every
// robotsgate of the host, and the reload guide uses robotsgate reload.
func TestReloadDocsOneInstance(t *testing.T) {
	for _, f := range append([]string{"README.md"}, docFiles(t)...) {
		_, code := proseLines(readRepoFile(t, f))
		for _, l := range code {
			if strings.Contains(l, "pidof robotsgate") || strings.Contains(l, "killall") || strings.Contains(l, "pkill") {
				t.Errorf("%s: %q signals every robotsgate on the host", f, l)
			}
		}
	}
	_, code := proseLines(readRepoFile(t, "docs/configuration-reload.md"))
	if !slices.ContainsFunc(code, func(l string) bool { return strings.Contains(l, "$ robotsgate reload ") }) {
		t.Error("docs/configuration-reload.md does not show robotsgate reload")
	}
}

// TestReadmeCommandsInOrder: the README's commands can be run one after
// the other: nothing backgrounds "go run" (whose child would keep the
// port), a robotsgate started in the background does not take the
// Quickstart's port, and the HTTPS test origin's two flags are named.
func TestReadmeCommandsInOrder(t *testing.T) {
	md := readRepoFile(t, "README.md")
	_, code := proseLines(md)
	started := 0
	for _, l := range code {
		l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
		if strings.Contains(l, "go run ./cmd/robotsgate") {
			t.Errorf("README runs robotsgate with go run: %q (killing go run leaves its child on the port)", l)
		}
		if strings.HasSuffix(l, "&") && strings.Contains(l, "robotsgate") {
			started++
			if !strings.Contains(l, "-listen ") || strings.Contains(l, ":9309") {
				t.Errorf("README starts a second robotsgate on the Quickstart's port: %q", l)
			}
		}
	}
	if started == 0 {
		t.Error("README starts no robotsgate for its example")
	}
	for _, flag := range []string{"-allowed-ports", "-upstream-roots"} {
		if !strings.Contains(string(md), flag) {
			t.Errorf("README does not say that a local HTTPS origin needs %s", flag)
		}
	}
}

// TestTransparentHostRecipe: docs/transparent.md's host recipe takes the
// steps TestTransparentSidecar takes: loopback brought up in the new
// namespace, robotsgate as uid 65532 told its data directory.
func TestTransparentHostRecipe(t *testing.T) {
	_, code := proseLines(readRepoFile(t, "docs/transparent.md"))
	recipe := strings.Join(code, "\n")
	test := string(readRepoFile(t, "cmd/robotsgate/transparent_netns_test.go"))
	for doc, src := range map[string]string{
		"ip link set lo up":          `"ip", "link", "set", "lo", "up"`,
		"--reuid 65532":              "Uid: 65532",
		"-data-dir ":                 `"-data-dir"`,
		"unshare --net":              `"unshare", "--net"`,
		"robotsgate iptables -apply": `"iptables", "-apply"`,
	} {
		if !strings.Contains(recipe, doc) {
			t.Errorf("docs/transparent.md's recipe lacks %q", doc)
		}
		if !strings.Contains(test, src) {
			t.Errorf("TestTransparentSidecar no longer does %s: update the recipe", src)
		}
	}
}

// TestAdminNotFoundHintLowerCase: the admin API's 404 names the proxy
// variables curl and wget read.
func TestAdminNotFoundHintLowerCase(t *testing.T) {
	r := startServe(t, nil, nil)
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Get("http://" + r.addr.String() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "http_proxy/https_proxy") || strings.Contains(string(b), "HTTP_PROXY") {
		t.Errorf("404: %d %s", resp.StatusCode, b)
	}
}
