package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

// benchServe drives h (a proxy handler) with GETs for origin paths,
// in-process (no client connection), measuring the proxy's own cost plus
// one loopback round trip to the origin. Unless worker is nil, each
// parallel worker calls it once for the function that readies each of its
// requests.
func benchServe(b *testing.B, h http.Handler, urls []string, worker func() func(*http.Request) *http.Request) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ready := func(r *http.Request) *http.Request { return r }
		if worker != nil {
			ready = worker()
		}
		i := 0
		for pb.Next() {
			r := ready(httptest.NewRequest(http.MethodGet, urls[i%len(urls)], nil))
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

// benchMixes are the URL mixes of the proxy benchmarks: "mixed" has one
// disallowed URL in four (answered by robotsgate without forwarding),
// "allowed" forwards every request, like the load script's mixes.
var benchMixes = []struct {
	name  string
	paths []string
}{
	{"mixed", []string{"/a", "/b", "/c", "/private/d"}},
	{"allowed", []string{"/a", "/b", "/c", "/d"}},
}

func benchURLs(o *httptest.Server, paths []string) []string {
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = o.URL + p
	}
	return urls
}

// BenchmarkRobotsgate is the full robotsgate Server (warm cache) on each
// URL mix; compare with BenchmarkBareGoproxy.
func BenchmarkRobotsgate(b *testing.B) {
	for _, mix := range benchMixes {
		b.Run(mix.name, func(b *testing.B) {
			o := benchOrigin(b)
			cfg := testConfig(b)
			cfg.HTTPS.Mode = config.HTTPSModeTunnel
			aud := audit.New(nopCloser{io.Discard})
			// the volume records on, as serve runs by default
			srv, err := buildServer(b, cfg, enforce.Config{}, Deps{Auditor: aud, Volume: volume.New(aud, nil, 10000)})
			if err != nil {
				b.Fatal(err)
			}
			benchServe(b, srv, benchURLs(o, mix.paths), nil)
		})
	}
}

// BenchmarkBareGoproxy is goproxy with the same transport and no hooks.
func BenchmarkBareGoproxy(b *testing.B) {
	for _, mix := range benchMixes {
		b.Run(mix.name, func(b *testing.B) {
			o := benchOrigin(b)
			tr, _ := NewTransport(config.Default())
			tr.DisableCompression = true
			p := goproxy.NewProxyHttpServer()
			p.Tr, p.ConnectDial, p.KeepAcceptEncoding = tr, nil, true
			benchServe(b, p, benchURLs(o, mix.paths), nil)
		})
	}
}
