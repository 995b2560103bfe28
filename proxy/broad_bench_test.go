package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/robotsmix"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// broadOrigins starts n origins, each on a loopback address of its own
// (127.1.a.b, an ephemeral port) and serving a robots.txt of the realistic
// mix, and returns one page URL per origin (one in 25 disallowed); accepts
// counts the connections they accept.
func broadOrigins(b *testing.B, n int, accepts *atomic.Int64) []string {
	b.Helper()
	page := []byte("broad crawl page\n")
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(robotsmix.File(originIndex(r.Host), r.Host))
			return
		}
		w.Write(page)
	})}
	b.Cleanup(func() { srv.Close() })
	urls := make([]string, n)
	for i := range n {
		l, err := net.Listen("tcp", fmt.Sprintf("127.1.%d.%d:0", i/250, i%250+1))
		if err != nil {
			b.Fatal(err)
		}
		go srv.Serve(countingListener{Listener: l, n: accepts})
		p := "/page"
		if i%25 == 24 {
			p = strings.TrimSuffix(robotsmix.Blocked, "/") + "/page"
		}
		urls[i] = "http://" + l.Addr().String() + p
	}
	return urls
}

// benchNewOrigins sends one request to each of b.N new origins through h,
// from 16 goroutines, in-process (no client connection).
func benchNewOrigins(b *testing.B, h http.Handler) {
	if b.N > 6000 {
		b.Skip("at most 6000 origins (file descriptors): use -benchtime Nx")
	}
	var accepts atomic.Int64
	urls := broadOrigins(b, b.N, &accepts)
	next := make(chan string, len(urls))
	for _, u := range urls {
		next <- u
	}
	close(next)
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan struct{})
	for range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			for u := range next {
				r := httptest.NewRequest(http.MethodGet, u, nil)
				r.Header.Set("User-Agent", "BenchBot/1.0")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 && w.Code != 403 {
					b.Errorf("%s: status %d", u, w.Code)
				}
			}
		}()
	}
	for range 16 {
		<-done
	}
	b.StopTimer()
	b.ReportMetric(float64(accepts.Load())/float64(b.N), "conns/origin")
}

// BenchmarkBroadRobotsgate is the full robotsgate Server, default settings,
// one request to each new origin: a robots.txt fetch, parse and store,
// then the page. Compare with BenchmarkBroadBare. Run it with
// -benchtime Nx (N <= 6000).
func BenchmarkBroadRobotsgate(b *testing.B) {
	cfg := testConfig(b)
	srv, err := buildServer(b, cfg, enforce.Config{}, Deps{Auditor: audit.New(nopCloser{io.Discard})})
	if err != nil {
		b.Fatal(err)
	}
	benchNewOrigins(b, srv)
}

// BenchmarkBroadBare is goproxy with robotsgate's transport and no hooks,
// one request to each new origin.
func BenchmarkBroadBare(b *testing.B) {
	tr, _ := NewTransport(config.Default())
	tr.DisableCompression = true
	p := goproxy.NewProxyHttpServer()
	p.Tr, p.ConnectDial, p.KeepAcceptEncoding = tr, nil, true
	benchNewOrigins(b, p)
}

// originIndex numbers the origin of host "127.1.a.b:port" for the mix.
func originIndex(host string) int {
	h := 0
	for _, c := range host {
		h = h*31 + int(c)
	}
	return h & 0xffff
}
