package proxy

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestOneOriginForEverySpelling: spellings of 127.0.0.1 as an IPv6
// literal share one origin with it: one robots.txt fetch, one crawl-delay
// slot, and the pause that a 503 with Retry-After on one spelling started
// holds for the others. Before hosts were canonical, each spelling had a
// robots.txt fetch, a slot and a pause of its own.
func TestOneOriginForEverySpelling(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nCrawl-delay: 5\n"), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "600")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("page"))
	})
	clk := enforcetest.NewClock(politeT0)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) { c.Politeness.MaxQueueWait = time.Second }})
	port := o.URL[strings.LastIndexByte(o.URL, ':')+1:]
	get := func(host, path string) *http.Response {
		t.Helper()
		hp := host + ":" + port
		resp, _ := rawProxyGet(t, h.addr, "http://"+hp+path, hp)
		return resp
	}

	if resp := get("[::ffff:127.0.0.1]", "/a"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	// The crawl-delay slot is taken for every spelling: 429, not forwarded.
	for _, host := range []string{"[::ffff:7f00:1]", "127.0.0.1", "[::FFFF:7F00:0001]", "[0:0:0:0:0:ffff:127.0.0.1]"} {
		if resp := get(host, "/b"); resp.StatusCode != http.StatusTooManyRequests ||
			resp.Header.Get(answer.HeaderDecision) != string(politeness.ReasonCrawlDelayWait) {
			t.Errorf("%s/b within the crawl-delay: %d %s, want 429 %s", host, resp.StatusCode,
				resp.Header.Get(answer.HeaderDecision), politeness.ReasonCrawlDelayWait)
		}
	}

	clk.Advance(5 * time.Second)
	if resp := get("[::ffff:127.0.0.1]", "/busy"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/busy: %d, want the origin's 503", resp.StatusCode)
	}
	clk.Advance(5 * time.Second) // a free slot: only the pause may refuse
	for _, host := range []string{"[::ffff:7f00:1]", "[::FFFF:7F00:0001]", "127.0.0.1"} {
		if resp := get(host, "/c"); resp.StatusCode != http.StatusServiceUnavailable ||
			resp.Header.Get(answer.HeaderDecision) != string(politeness.ReasonOriginPaused) {
			t.Errorf("%s/c during the pause: %d %s, want 503 %s", host, resp.StatusCode,
				resp.Header.Get(answer.HeaderDecision), politeness.ReasonOriginPaused)
		}
	}
	if n := o.hits.Load(); n != 2 {
		t.Errorf("%d requests reached the origin, want 2 (/a and /busy)", n)
	}
	if n := o.robotsHits.Load(); n != 1 {
		t.Errorf("%d robots.txt fetches, want 1", n)
	}
	for _, r := range h.audit.Records(t) {
		if r["origin"] != "http://127.0.0.1:"+port {
			t.Errorf("audit record with origin %v, want http://127.0.0.1:%s", r["origin"], port)
		}
	}
}

// TestFullwidthHostSameOrigin: "ｌocalhost" (fullwidth l), which Go's
// transport maps to localhost, is the origin localhost: no second
// robots.txt fetch. (net/http refuses a Host header that is not ASCII, so
// the spelling travels in the request line, as an attacker sends it.)
func TestFullwidthHostSameOrigin(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nDisallow: /private\n"), nil)
	h := newHarness(t, harnessOpts{})
	port := o.URL[strings.LastIndexByte(o.URL, ':')+1:]
	for _, host := range []string{"localhost", "ｌocalhost", "ＬＯＣＡＬＨＯＳＴ.", "LocalHost"} {
		hp := host + ":" + port
		if resp, _ := rawProxyGet(t, h.addr, "http://"+hp+"/page", "localhost:"+port); resp.StatusCode != http.StatusOK {
			t.Errorf("GET http://%s/page: %d, want 200", hp, resp.StatusCode)
		}
		if resp, _ := rawProxyGet(t, h.addr, "http://"+hp+"/private", "localhost:"+port); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET http://%s/private: %d, want 403", hp, resp.StatusCode)
		}
		if n := o.robotsHits.Load(); n != 1 {
			t.Errorf("after %s: %d robots.txt fetches, want 1", host, n)
		}
	}
	if n := o.hits.Load(); n != 4 {
		t.Errorf("%d pages reached the origin, want 4", n)
	}
}

// TestInvalidHostRefused: a host with no canonical spelling is refused
// with 400 invalid-host, audited, and nothing is fetched.
func TestInvalidHostRefused(t *testing.T) {
	o := newOrigin(t, robotsBody("User-agent: *\nAllow: /\n"), nil)
	h := newHarness(t, harnessOpts{})
	port := o.URL[strings.LastIndexByte(o.URL, ':')+1:]
	for _, host := range []string{"127.1", "0x7f.0.0.1", "2130706433", "a..b", "xn--a\u200d.com"} {
		hp := host + ":" + port
		resp, _ := rawProxyGet(t, h.addr, "http://"+hp+"/page", "localhost:"+port)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(answer.HeaderDecision) != string(enforce.ReasonInvalidHost) {
			t.Errorf("GET http://%s/page: %d %s, want 400 invalid-host", hp, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
	}
	if n := len(h.audit.Records(t)); n != 5 {
		t.Errorf("%d audit records, want 5:\n%s", n, h.audit.String())
	}
	if o.robotsHits.Load()+o.hits.Load() != 0 {
		t.Error("a request reached the origin")
	}
}

// TestMITMCanonicalSpellings: a CONNECT to an IPv4-mapped spelling of
// 127.0.0.1 is intercepted as 127.0.0.1 (its certificate names that
// address), and inside the session any spelling of the same address and
// port is the same origin: not misdirected, one robots.txt fetch (over
// the policy transport's own TLS connection), decided as
// https://127.0.0.1:P.
func TestMITMCanonicalSpellings(t *testing.T) {
	o := newTLSOrigin(t, "User-agent: *\nDisallow: /private\n")
	p := startHTTPSProxy(t, mitmConfig(t, o))
	port := strconv.Itoa(o.port(t))

	resp, body, c := p.rawConnect(t, "[::ffff:127.0.0.1]:"+port)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d %q", resp.StatusCode, body)
	}
	send := sessionSender(t, c, p.ca)
	for _, host := range []string{"[::ffff:7f00:1]", "127.0.0.1", "[::FFFF:127.0.0.1]"} {
		if resp, _ := send(host+":"+port, "/a"); resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", host, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
		if resp, _ := send(host+":0"+port, "/private"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s: /private %d, want 403", host, resp.StatusCode)
		}
	}
	if n := o.hit("/robots.txt"); n != 1 {
		t.Errorf("%d robots.txt fetches, want 1", n)
	}
	if n := o.hit("/private"); n != 0 {
		t.Errorf("/private reached the origin %d times", n)
	}
	for _, r := range p.audit.Records(t) {
		if r["origin"] != "https://127.0.0.1:"+port {
			t.Errorf("audit record with origin %v, want https://127.0.0.1:%s", r["origin"], port)
		}
	}
}

// TestIPv6ZoneSameOrigin: a zone on an address that is not link-local
// ("[::1%lo]", "[::1%1]", "[::1%eth0]") is ignored by the kernel, so it is
// the origin [::1]: one robots.txt fetch and one crawl-delay slot. Before
// zones were dropped, each zone spelling was an origin of its own with its
// own slot: the crawl-delay was escaped by adding a zone.
func TestIPv6ZoneSameOrigin(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	o := newOrigin(t, robotsBody("User-agent: *\nCrawl-delay: 5\n"), nil)
	o.Close()
	o.Server = httptest.NewUnstartedServer(o.Config.Handler)
	o.Listener = ln
	o.Start()
	t.Cleanup(o.Server.Close)
	clk := enforcetest.NewClock(politeT0)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) { c.Politeness.MaxQueueWait = time.Second }})
	port := o.URL[strings.LastIndexByte(o.URL, ':')+1:]
	if resp, _ := rawProxyGet(t, h.addr, "http://[::1]:"+port+"/a", "[::1]:"+port); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	for _, host := range []string{"[::1%25lo]", "[::1%251]", "[::1%25eth0]", "[0::1%25LO]"} {
		hp := host + ":" + port
		resp, _ := rawProxyGet(t, h.addr, "http://"+hp+"/b", hp)
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s/b within the crawl-delay: %d %s, want 429", hp, resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
	}
	if n := o.hits.Load(); n != 1 {
		t.Errorf("%d requests reached the origin, want 1", n)
	}
	if n := o.robotsHits.Load(); n != 1 {
		t.Errorf("%d robots.txt fetches, want 1", n)
	}
}
