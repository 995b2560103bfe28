package proxy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// tagPages is an origin's pages for the end-to-end robot-tag tests.
func tagPages(secret string) http.HandlerFunc {
	page := `<!doctype html><html><head><title>t</title><meta name="robots" content="noindex"></head><body>` + secret + `</body></html>`
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/meta-noindex":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			io.WriteString(w, page)
		case "/meta-in-text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, page)
		case "/mandelbot":
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("X-Robots-Tag", "mandelbot: noindex")
			io.WriteString(w, secret)
		case "/none":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("X-Robots-Tag", "none")
			io.WriteString(w, secret)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>ok</title></head><body>"+secret+"</body></html>")
		}
	}
}

// tagRecords returns the audit records with reason robot-tag.
func tagRecords(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range h.audit.Records(t) {
		if r["reason"] == "robot-tag" {
			out = append(out, r)
		}
	}
	return out
}

func TestRobotTagsEndToEndAnnotate(t *testing.T) {
	secret := strings.Repeat("kept body ", 20_000) // 200 KB, past the scan window
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages(secret))
	h := newHarness(t, harnessOpts{}) // default: robot_tags annotate

	resp, body := h.get(t, o.URL+"/meta-noindex", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || !strings.Contains(body, secret) {
		t.Fatalf("annotate: status %d, body intact %v", resp.StatusCode, strings.Contains(body, secret))
	}
	if got := resp.Header.Get(answer.HeaderIndex); got != "noindex" {
		t.Errorf("%s = %q, want noindex", answer.HeaderIndex, got)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d, want the origin's %d (kept, not chunked)", resp.ContentLength, len(body))
	}
	recs := tagRecords(t, h)
	if len(recs) != 1 {
		t.Fatalf("robot-tag audit records: %v", recs)
	}
	r := recs[0]
	if r["decision"] != audit.DecisionReported || r["agent"] != "Mandelbot" || r["status"] != 200.0 ||
		r["url"] != o.URL+"/meta-noindex" || !strings.Contains(r["detail"].(string), "meta: noindex") {
		t.Errorf("audit record: %v", r)
	}

	// No tag, no header, no record.
	resp, body = h.get(t, o.URL+"/plain", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || resp.Header.Get(answer.HeaderIndex) != "" || !strings.Contains(body, secret) {
		t.Errorf("untagged page: %d %q", resp.StatusCode, resp.Header.Get(answer.HeaderIndex))
	}

	// X-Robots-Tag: none.
	resp, body = h.get(t, o.URL+"/none")
	if resp.StatusCode != 200 || body != secret || resp.Header.Get(answer.HeaderIndex) != "noindex, none" {
		t.Errorf("X-Robots-Tag none: %d %q", resp.StatusCode, resp.Header.Get(answer.HeaderIndex))
	}
	if n := len(tagRecords(t, h)); n != 2 {
		t.Errorf("%d robot-tag records, want 2", n)
	}
}

func TestRobotTagsEndToEndEnforce(t *testing.T) {
	secret := "SECRET-" + strings.Repeat("x", 100_000)
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages(secret))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = config.RobotTagsEnforce }})

	resp, body := h.get(t, o.URL+"/meta-noindex", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
		t.Fatalf("enforce: status %d, origin body reached the client: %v", resp.StatusCode, strings.Contains(body, "SECRET"))
	}
	if resp.Header.Get(answer.HeaderDecision) != "robot-tag" || resp.Header.Get(answer.HeaderIndex) != "noindex" {
		t.Errorf("403 headers: %v", resp.Header)
	}
	recs := tagRecords(t, h)
	if len(recs) != 1 || recs[0]["decision"] != audit.DecisionBlocked || recs[0]["status"] != 403.0 {
		t.Fatalf("audit: %v", recs)
	}
	t.Logf("audit record: %s", strings.TrimSpace(h.audit.String()))

	// A meta tag in a non-HTML response is not a robot tag.
	resp, body = h.get(t, o.URL+"/meta-in-text", "User-Agent", "Mandelbot/1.0")
	if resp.StatusCode != 200 || !strings.Contains(body, "SECRET") || resp.Header.Get(answer.HeaderIndex) != "" {
		t.Errorf("meta in text/plain: status %d", resp.StatusCode)
	}

	// X-Robots-Tag: mandelbot: noindex applies to Mandelbot only.
	resp, body = h.get(t, o.URL+"/mandelbot", "User-Agent", "Mandelbot/2.0 (+https://www.fractle.com/)")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
		t.Errorf("mandelbot: noindex for Mandelbot: status %d", resp.StatusCode)
	}
	resp, body = h.get(t, o.URL+"/mandelbot", "User-Agent", "Googlebot/2.1")
	if resp.StatusCode != 200 || body != secret {
		t.Errorf("mandelbot: noindex for Googlebot: status %d", resp.StatusCode)
	}

	// X-Robots-Tag: none refuses too.
	resp, _ = h.get(t, o.URL+"/none")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(answer.HeaderIndex) != "noindex, none" {
		t.Errorf("X-Robots-Tag none: status %d, %s %q", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex))
	}
	if n := len(tagRecords(t, h)); n != 3 {
		t.Errorf("%d robot-tag records, want 3", n)
	}
}

func TestRobotTagsEndToEndReportMode(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages("body"))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) {
		c.Mode = config.ModeReport
		c.RobotTags.Mode = config.RobotTagsEnforce
	}})
	resp, body := h.get(t, o.URL+"/meta-noindex")
	if resp.StatusCode != 200 || !strings.Contains(body, "body") || resp.Header.Get(answer.HeaderIndex) != "noindex" {
		t.Fatalf("report mode: status %d, %s %q", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex))
	}
	if recs := tagRecords(t, h); len(recs) != 1 || recs[0]["decision"] != audit.DecisionReported {
		t.Errorf("audit: %v", recs)
	}
}

func TestRobotTagsEndToEndOff(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), tagPages("body"))
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.RobotTags.Mode = config.RobotTagsOff }})
	resp, _ := h.get(t, o.URL+"/none")
	if resp.StatusCode != 200 || resp.Header.Get(answer.HeaderIndex) != "" || len(tagRecords(t, h)) != 0 {
		t.Errorf("off: status %d, %s %q", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex))
	}
}

// TestRobotTagsEndToEndMITM checks robot tags inside an HTTPS (MITM)
// session, where the scan wraps the session's own round tripper.
func TestRobotTagsEndToEndMITM(t *testing.T) {
	secret := "SECRET-" + strings.Repeat("y", 100_000)
	o := &tlsOrigin{}
	pages := tagPages(secret)
	o.Server = quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		pages(w, r)
	}))
	t.Cleanup(o.Close)

	for _, mode := range []config.RobotTagsMode{config.RobotTagsAnnotate, config.RobotTagsEnforce} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := mitmConfig(t, o)
			cfg.RobotTags.Mode = mode
			p := startHTTPSProxy(t, cfg)
			c := p.client(p.ca)
			resp, body := get(t, c, o.URL+"/meta-noindex")
			switch mode {
			case config.RobotTagsAnnotate:
				if resp.StatusCode != 200 || !strings.Contains(body, secret) || resp.Header.Get(answer.HeaderIndex) != "noindex" {
					t.Fatalf("status %d, %s %q, body intact %v", resp.StatusCode, answer.HeaderIndex, resp.Header.Get(answer.HeaderIndex), strings.Contains(body, secret))
				}
				if resp.ContentLength != int64(len(body)) {
					t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(body))
				}
			case config.RobotTagsEnforce:
				if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "SECRET") {
					t.Fatalf("status %d, origin body reached the client: %v", resp.StatusCode, strings.Contains(body, "SECRET"))
				}
			}
			if rec := p.audit.Find(t, "robot-tag"); rec["url"] != o.URL+"/meta-noindex" {
				t.Errorf("audit record: %v", rec)
			}
			// The session goes on: the next request is unaffected.
			if resp, body := get(t, c, o.URL+"/plain"); resp.StatusCode != 200 || !strings.Contains(body, secret) {
				t.Errorf("next request in the session: %d", resp.StatusCode)
			}
		})
	}
}
