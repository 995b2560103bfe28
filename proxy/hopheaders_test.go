package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHopByHopHeadersStripped: hop-by-hop headers (and those Connection
// names) do not cross the proxy in either direction; "TE: trailers" and
// end-to-end headers do.
func TestHopByHopHeadersStripped(t *testing.T) {
	o := newOrigin(t, robotsStatus(404), func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Connection", "X-Origin-Secret")
		h.Set("X-Origin-Secret", "s")
		h.Set("Keep-Alive", "timeout=5")
		h.Set("Proxy-Authenticate", `Basic realm="origin"`)
		h.Set("X-End-To-End", "kept")
		io.WriteString(w, "page")
	})
	h := newHarness(t, harnessOpts{})
	resp, body := h.get(t, o.URL+"/p",
		"Connection", "X-Client-Secret, keep-alive",
		"X-Client-Secret", "c",
		"Keep-Alive", "timeout=5",
		"Te", "trailers, deflate",
		"Upgrade", "h2c",
		"X-Forward-Me", "yes",
	)
	if resp.StatusCode != 200 || body != "page" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	got := o.header()
	for _, k := range []string{"Connection", "X-Client-Secret", "Keep-Alive", "Upgrade", "Proxy-Connection"} {
		if v, ok := got[k]; ok {
			t.Errorf("origin got hop-by-hop request header %s: %q", k, v)
		}
	}
	if te := got.Get("Te"); te != "trailers" {
		t.Errorf("origin got TE %q, want trailers", te)
	}
	if got.Get("X-Forward-Me") != "yes" {
		t.Errorf("end-to-end request header lost: %v", got)
	}
	for _, k := range []string{"X-Origin-Secret", "Keep-Alive", "Proxy-Authenticate"} {
		if v, ok := resp.Header[k]; ok {
			t.Errorf("client got hop-by-hop response header %s: %q", k, v)
		}
	}
	if resp.Header.Get("X-End-To-End") != "kept" {
		t.Errorf("end-to-end response header lost: %v", resp.Header)
	}
}

// TestWebSocketUpgradeStillRelayed: a WebSocket handshake keeps its
// Connection/Upgrade headers both ways and the upgraded connection is
// relayed.
func TestWebSocketUpgradeStillRelayed(t *testing.T) {
	o := newOrigin(t, robotsStatus(404), func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || !strings.EqualFold(r.Header.Get("Connection"), "Upgrade") {
			http.Error(w, "not an upgrade: "+fmt.Sprint(r.Header), http.StatusBadRequest)
			return
		}
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testTimeout))
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		line, _ := brw.ReadString('\n')
		io.WriteString(c, "echo "+line)
	})
	h := newHarness(t, harnessOpts{})
	c, err := net.DialTimeout("tcp", h.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	fmt.Fprintf(c, "GET %s/ws HTTP/1.1\r\nHost: %s\r\nUser-Agent: TestBot/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n",
		o.URL, strings.TrimPrefix(o.URL, "http://"))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("handshake: %d %q", resp.StatusCode, b)
	}
	io.WriteString(c, "ping\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "echo ping\n" {
		t.Fatalf("relayed: %q %v", line, err)
	}
}

// BenchmarkRequestHeaderHooks measures the per-request cost of the
// destination check and the hop-by-hop strip on a typical proxied GET
// (curl's headers, port not one of robotsgate's). "setup" is the cost of
// copying the request alone, to subtract.
func BenchmarkRequestHeaderHooks(b *testing.B) {
	s := &Server{}
	s.self.Add("127.0.0.1:9309")
	s.self.Add("0.0.0.0:9310")
	base, _ := http.NewRequest(http.MethodGet, "http://example.com/page?q=1", nil)
	base.Header = http.Header{"User-Agent": {"curl/8"}, "Accept": {"*/*"}, "Proxy-Connection": {"Keep-Alive"}}
	for _, hooks := range []bool{false, true} {
		name := "setup"
		if hooks {
			name = "hooks"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := *base
				r.Header = base.Header.Clone()
				st := &requestState{Req: &r} // enter made it
				if hooks {
					destinationStep{self: &s.self}.onRequest(&r, st)
					hopHeadersStep{}.onRequest(&r, st)
				}
			}
		})
	}
}
