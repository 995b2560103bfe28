package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// TestMalformedContentSignalFollowsUnknown: a Content-Signal statement
// (robots.txt line or response header) that names train-ai but cannot be
// parsed makes train-ai unknown, which follows usage.unknown: a train-ai
// crawler is refused under deny, even though the file's own
// Content-Signal line (or robots.txt, for the header) allows training,
// and let through under allow. Before, the malformed statement was read
// as none and the permissive line decided.
func TestMalformedContentSignalFollowsUnknown(t *testing.T) {
	const robots = "Content-Signal: ai-train=yes\nUser-agent: *\nAllow: /\nContent-Signal: /group/ search=yes;ai-train=no\n"
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte(robots))
			return
		case "/header":
			w.Header().Set("Content-Signal", `ai-train="no"`)
		case "/header-semicolon":
			w.Header().Set("Content-Signal", "ai-train=no;")
		}
		w.Write([]byte("page"))
	}))
	defer o.Close()
	for _, unknown := range []config.UsageUnknown{config.UsageUnknownDeny, config.UsageUnknownAllow} {
		p := startUsageProxy(t, func(c *config.Config) {
			c.Purposes = aipref.SetOf(aipref.TrainAI)
			c.Usage.Unknown = unknown
			c.Usage.Response = config.UsageResponseEnforce
		})
		c := p.client(nil)
		for _, path := range []string{"/group/page", "/header", "/header-semicolon"} {
			resp, _ := get(t, c, o.URL+path)
			want := http.StatusOK
			if unknown == config.UsageUnknownDeny {
				want = http.StatusForbidden
			}
			if resp.StatusCode != want || want == http.StatusForbidden && resp.Header.Get(answer.HeaderDecision) != "usage-disallowed" {
				t.Errorf("usage.unknown %s, %s: %d %s, want %d", unknown, path, resp.StatusCode, resp.Header.Get(answer.HeaderDecision), want)
			}
		}
		if resp, _ := get(t, c, o.URL+"/other"); resp.StatusCode != http.StatusOK {
			t.Errorf("usage.unknown %s, /other (the file's ai-train=yes): %d", unknown, resp.StatusCode)
		}
	}
}
