package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"testing"
)

func TestRefusalKeepsClientConnection(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{})
	c := dialRaw(t, h.addr)
	defer c.Close()
	br := bufio.NewReader(c)
	for i, path := range []string{"/private/a", "/private/b", "/open"} {
		fmt.Fprintf(c, "GET %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\n\r\n", o.URL, path, o.Listener.Addr())
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d (%s) on the kept connection: %v", i, path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := http.StatusForbidden
		if path == "/open" {
			want = http.StatusOK
		}
		if resp.StatusCode != want || resp.Close {
			t.Fatalf("%s: status %d (want %d), close %v: %s", path, resp.StatusCode, want, resp.Close, body)
		}
	}
	if got := len(h.audit.Records(t)); got != 2 {
		t.Errorf("%d audit records, want the 2 refusals'", got)
	}
	if o.hits.Load() != 1 {
		t.Errorf("origin saw %d requests, want 1", o.hits.Load())
	}
}
