package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/internal/config"
)

// desyncOrigin is a raw HTTP/1.1 origin on 127.0.0.1 that ignores a
// request body it does not expect ("CL.0"): the body of a GET is read as
// the next request on the connection. It answers a request for
// /smuggled late, only once the next request has arrived on the same
// keep-alive connection, so that the answer lands on whatever request
// was written there next. It counts the requests of each path.
type desyncOrigin struct {
	ln     net.Listener
	robots string
	files  map[string]string // other policy files by path (tdmrep.json), served with max-age=60
	mu     sync.Mutex
	hits   map[string]int
	wg     sync.WaitGroup
}

func newDesyncOrigin(t *testing.T, robots string) *desyncOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &desyncOrigin{ln: ln, robots: robots, hits: map[string]int{}}
	o.wg.Add(1)
	go o.accept()
	t.Cleanup(func() { ln.Close(); o.wg.Wait() })
	return o
}

func (o *desyncOrigin) accept() {
	defer o.wg.Done()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return
		}
		c.SetDeadline(time.Now().Add(2 * testTimeout))
		conns = append(conns, c)
		o.wg.Add(1)
		go o.serve(c)
	}
}

// serve answers the requests of one connection in order, never reading a
// body, until the connection fails.
func (o *desyncOrigin) serve(c net.Conn) {
	defer o.wg.Done()
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	for err == nil {
		o.mu.Lock()
		o.hits[req.URL.Path]++
		o.mu.Unlock()
		if req.URL.Path != "/smuggled" {
			o.answer(c, req)
			req, err = http.ReadRequest(br)
			continue
		}
		// Late: wait for the next request, then answer /smuggled first.
		next, nerr := http.ReadRequest(br)
		if nerr != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found")
		req, err = next, nil
	}
}

// answer writes the answer to req: the robots.txt, or a page.
func (o *desyncOrigin) answer(c net.Conn, req *http.Request) {
	body, extra := "page "+req.URL.Path, ""
	if req.URL.Path == "/robots.txt" {
		body = o.robots
	} else if f, ok := o.files[req.URL.Path]; ok {
		body, extra = f, "Cache-Control: max-age=60\r\n"
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s", extra, len(body), body)
}

func (o *desyncOrigin) hitsOf(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// smuggleGet sends, through the proxy at addr, an allowed GET /page to o
// whose body is a request (GET /smuggled) that o answers late on the same
// connection; the test fails unless the GET is answered 200.
func (o *desyncOrigin) smuggleGet(t *testing.T, addr string) {
	t.Helper()
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: " + o.ln.Addr().String() + "\r\n\r\n"
	req := fmt.Sprintf("GET http://%s/page HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		o.ln.Addr(), o.ln.Addr(), len(smuggled), smuggled)
	if resp, body := rawRoundTrip(t, addr, req); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /page with a smuggled body: %d %q", resp.StatusCode, body)
	}
}

// checkRefetched fails the test if the refused /private reached o, or if
// o did not see exactly two requests for the policy file at path.
func (o *desyncOrigin) checkRefetched(t *testing.T, path string) {
	t.Helper()
	if n := o.hitsOf("/private"); n != 0 {
		t.Errorf("the refused /private reached the origin %d time(s)", n)
	}
	if n := o.hitsOf(path); n != 2 {
		t.Errorf("%d %s requests reached the origin, want 2", n, path)
	}
}

// TestRobotsFetchNotPoisonedByDesync: a client smuggles a request in the
// body of an allowed GET to an origin that ignores the body; the origin
// answers the smuggled request late, on the same keep-alive connection.
// The next robots.txt fetch (the cached copy has expired) must not read
// that answer (a 404: "no robots.txt, all allowed"): it goes on a
// connection of its own, so the disallowed URL is still refused and never
// reaches the origin. Before robots.txt had a transport of its own, the
// fetch took the poisoned pooled connection and /private was forwarded.
func TestRobotsFetchNotPoisonedByDesync(t *testing.T) {
	o := newDesyncOrigin(t, "User-agent: *\nDisallow: /private\n")
	clk := enforcetest.NewClock(politeT0)
	h := newHarness(t, harnessOpts{clock: clk, config: func(c *config.Config) {
		c.Robots.TTL = time.Hour
		c.Robots.MinTTL = time.Minute
	}})
	base := "http://" + o.ln.Addr().String()

	o.smuggleGet(t, h.addr)
	if n := o.hitsOf("/robots.txt"); n != 1 {
		t.Fatalf("%d robots.txt fetches before the cache expired, want 1", n)
	}

	clk.Advance(2 * time.Hour) // the robots.txt copy expired: the next request fetches it again
	resp, body := h.get(t, base+"/private")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Disallow: /private") {
		t.Errorf("GET /private after the desync: %d %q, want 403 by Disallow: /private", resp.StatusCode, body)
	}
	o.checkRefetched(t, "/robots.txt")
}

// TestSmuggledAnswerReachesNoClient: a client smuggles a disallowed
// request in the body of an allowed POST to an origin that ignores the
// body and answers the smuggled request late, on the same connection.
// That answer must reach no client: the upstream connection of a request
// with a body is closed, not pooled. Before, the next request through the
// proxy (any client's) took the pooled connection and got the answer to
// the disallowed /smuggled.
func TestSmuggledAnswerReachesNoClient(t *testing.T) {
	o := newDesyncOrigin(t, "User-agent: *\nDisallow: /smuggled\n")
	h := newHarness(t, harnessOpts{})
	base := "http://" + o.ln.Addr().String()
	if resp, _ := h.get(t, base+"/smuggled"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /smuggled: %d, want 403", resp.StatusCode)
	}
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: " + o.ln.Addr().String() + "\r\n\r\n"
	for _, method := range []string{"POST", "GET"} {
		req := fmt.Sprintf("%s %s/page HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			method, base, o.ln.Addr(), len(smuggled), smuggled)
		if resp, body := rawRoundTrip(t, h.addr, req); resp.StatusCode != http.StatusOK || body != "page /page" {
			t.Fatalf("%s /page with a smuggled body: %d %q", method, resp.StatusCode, body)
		}
		if resp, body := h.get(t, base+"/other"); resp.StatusCode != http.StatusOK || body != "page /other" {
			t.Errorf("GET /other after a %s with a smuggled body: %d %q, want 200 \"page /other\" (not the smuggled request's answer)",
				method, resp.StatusCode, body)
		}
	}
}
