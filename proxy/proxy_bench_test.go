package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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

// benchServer builds the robotsgate Server of the benchmarks from cfg,
// HTTPS tunnelled, its audit records discarded; withVolume turns the
// volume records on, as serve runs by default.
func benchServer(b *testing.B, cfg config.Config, withVolume bool) *Server {
	cfg.HTTPS.Mode = config.HTTPSModeTunnel
	deps := Deps{Auditor: audit.New(nopCloser{io.Discard})}
	if withVolume {
		deps.Volume = volume.New(deps.Auditor, nil, 10000)
	}
	srv, err := buildServer(b, cfg, enforce.Config{}, deps)
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// BenchmarkRobotsgate is the full robotsgate Server (warm cache) on each
// URL mix; compare with BenchmarkBareGoproxy.
func BenchmarkRobotsgate(b *testing.B) {
	for _, mix := range benchMixes {
		b.Run(mix.name, func(b *testing.B) {
			o := benchOrigin(b)
			srv := benchServer(b, testConfig(b), true)
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

// BenchmarkTransparent is BenchmarkRobotsgate's requests as the
// transparent listener's http.Server hands them on: origin-form, on a
// connection (one per parallel worker) whose original destination is the
// origin. Compare with BenchmarkRobotsgate; the connection's own cost
// (original destination, sniffing) is paid once per connection, not per
// request, and is not included.
func BenchmarkTransparent(b *testing.B) {
	for _, mix := range benchMixes {
		b.Run(mix.name, func(b *testing.B) {
			o := benchOrigin(b)
			cfg := testConfig(b)
			cfg.Transparent.Listen = "127.0.0.1:0"
			srv := benchServer(b, cfg, false)
			host := strings.TrimPrefix(o.URL, "http://")
			dst := netip.MustParseAddrPort(host)
			h := srv.life.Wrap(http.HandlerFunc(srv.serveRedirected))
			benchServe(b, h, mix.paths, func() func(*http.Request) *http.Request {
				ctx := context.WithValue(context.Background(), redirectedKey{}, &redirected{dst: dst})
				return func(r *http.Request) *http.Request {
					r = r.WithContext(ctx)
					r.Host = host
					return r
				}
			})
		})
	}
}
