package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// withheldBody is an origin whose responses are of unknown length (an
// event stream, a long poll): it sends the head at once and withholds the
// body until the test releases it, or until a long fallback, which fails
// the test.
type withheldBody struct {
	release    chan struct{}
	byFallback chan bool
}

func newWithheldBody() *withheldBody {
	return &withheldBody{release: make(chan struct{}), byFallback: make(chan bool, 1)}
}

func (o *withheldBody) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	select {
	case <-o.release:
		o.byFallback <- false
	case <-time.After(20 * time.Second):
		o.byFallback <- true
	}
	io.WriteString(w, "data: late\n\n")
}

// check releases the body once the client has read the head (resp, err)
// and fails the test when the head came only with the body.
func (o *withheldBody) check(t *testing.T, resp *http.Response, err error) {
	t.Helper()
	close(o.release)
	if err != nil {
		t.Fatalf("reading the head: %v", err)
	}
	defer resp.Body.Close()
	if <-o.byFallback {
		t.Fatal("the head reached the client only after the origin sent the body")
	}
	if b, err := io.ReadAll(io.LimitReader(resp.Body, 12)); err != nil || string(b) != "data: late\n\n" {
		t.Fatalf("body %q, %v", b, err)
	}
}

// TestStreamedHeadNotHeldPlain: a forwarded response of unknown length
// reaches the client with its header while the origin still withholds
// the body.
func TestStreamedHeadNotHeldPlain(t *testing.T) {
	wb := newWithheldBody()
	o := httptest.NewServer(wb)
	defer o.Close()
	h := newHarness(t, harnessOpts{})
	c := dialRaw(t, h.addr)
	defer c.Close()
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET %s/stream HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\n\r\n", o.URL, o.Listener.Addr())
	resp, err := http.ReadResponse(br, nil)
	wb.check(t, resp, err)
}

// TestStreamedHeadNotHeld: inside an MITM session the head of a response
// of unknown length reaches the client while its origin still withholds
// the body: only a body of known length takes the head with it.
func TestStreamedHeadNotHeld(t *testing.T) {
	wb := newWithheldBody()
	o := &tlsOrigin{Server: quietTLSServer(wb)}
	t.Cleanup(o.Close)
	p := startHTTPSProxy(t, mitmConfig(t, o))
	target := strings.TrimPrefix(o.URL, "https://")
	c, _ := plainSession(t, p, target)
	tc := tls.Client(c, &tls.Config{RootCAs: p.ca, ServerName: "127.0.0.1"})
	br := bufio.NewReader(tc)
	io.WriteString(tc, "GET /stream HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	wb.check(t, resp, err)
}
