package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
)

// benchServe drives h (a proxy handler) with GETs for origin paths,
// in-process (no client connection), measuring the proxy's own cost plus
// one loopback round trip to the origin.
func benchServe(b *testing.B, h http.Handler, urls []string) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, urls[i%len(urls)], nil)
			r.Header.Set("User-Agent", "BenchBot/1.0")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 && w.Code != 403 {
				b.Fatalf("status %d", w.Code)
			}
			i++
		}
	})
}

func benchOrigin(b *testing.B) *httptest.Server {
	body := make([]byte, 1024)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, privateRobots)
			return
		}
		w.Write(body)
	}))
	b.Cleanup(o.Close)
	return o
}

// BenchmarkRobotsgate is the full robotsgate Server (warm cache, mixed
// allowed and disallowed URLs); compare with BenchmarkBareGoproxy.
func BenchmarkRobotsgate(b *testing.B) {
	o := benchOrigin(b)
	cfg := testConfig(b)
	cfg.HTTPS.Mode = HTTPSModeTunnel
	srv, err := buildServer(b, cfg, enforce.Config{}, Deps{Auditor: NewAuditor(nopCloser{io.Discard})})
	if err != nil {
		b.Fatal(err)
	}
	benchServe(b, srv, []string{o.URL + "/a", o.URL + "/b", o.URL + "/c", o.URL + "/private/d"})
}

// BenchmarkBareGoproxy is goproxy with the same transport and no hooks.
func BenchmarkBareGoproxy(b *testing.B) {
	o := benchOrigin(b)
	tr, _ := NewTransport(Default())
	tr.DisableCompression = true
	p := goproxy.NewProxyHttpServer()
	p.Tr, p.ConnectDial, p.KeepAcceptEncoding = tr, nil, true
	benchServe(b, p, []string{o.URL + "/a", o.URL + "/b", o.URL + "/c", o.URL + "/private/d"})
}
