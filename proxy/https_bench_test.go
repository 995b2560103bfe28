package proxy

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// BenchmarkHTTPSMITM measures one HTTPS request through robotsgate's MITM
// (robots decision inside TLS, warm robots.txt cache) next to a bare
// goproxy MITM of the same version with the same outbound transport
// settings, CA and certificate cache. keepalive reuses the client's
// connection (the per-request cost); mixed does too, cycling through the
// load script's eight paths of which three are under /private (refused
// 403 by robotsgate, forwarded by the bare goproxy); newconn opens a new
// CONNECT and TLS session per request (handshake cost, leaf certificate
// from the cache).
//
//	go test ./proxy/ -run '^$' -bench HTTPSMITM -benchtime 1000x -count 3
func BenchmarkHTTPSMITM(b *testing.B) {
	origin := newTLSOrigin(b, "User-agent: *\nDisallow: /private\n")
	cfg := testConfig(b)
	allowOrigin(b, &cfg, origin.Listener.Addr().String(), origin.Certificate())
	rg := startHTTPSProxy(b, cfg)

	ca, _ := rg.srv.ca()
	bareProxy := startBareMITM(b, cfg, ca)

	for _, p := range []struct {
		name string
		p    *httpsProxy
	}{{"goproxy", bareProxy}, {"robotsgate", rg}} {
		for _, mode := range []string{"keepalive", "mixed", "newconn"} {
			b.Run(p.name+"/"+mode, func(b *testing.B) {
				c := p.p.client(rg.ca)
				c.Transport.(*http.Transport).DisableKeepAlives = mode == "newconn"
				defer c.Transport.(*http.Transport).CloseIdleConnections()
				benchGet(b, c, origin.URL+"/public/page", 200) // warm: robots.txt, leaf certificate
				cpu0 := processCPU()
				n := benchLoop(b, c, origin.URL, mode == "mixed", p.name == "robotsgate")
				// CPU of the whole process (client, proxy and origin alike in
				// both runs): less noisy than wall time on a shared machine.
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
			})
		}
	}
}

// mixedPaths are the paths of the load script's mixed load
// (scripts/loadtest/mitmload); robots.txt "Disallow: /private" refuses
// three of them.
var mixedPaths = []string{"/", "/page/1", "/a/b/c?x=1", "/news/2026/11/22/story.html", "/img/logo.png",
	"/private/secret", "/files/report.pdf", "/private/open/doc"}

// startBareMITM starts a bare goproxy MITM on 127.0.0.1, with the
// transport settings of cfg and a leaf-certificate cache as robotsgate's,
// signing with ca, until tb ends.
func startBareMITM(tb testing.TB, cfg config.Config, ca *tls.Certificate) *httpsProxy {
	bare := goproxy.NewProxyHttpServer()
	bare.Logger = log.New(io.Discard, "", 0)
	tr, err := NewTransport(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tr.DisableCompression = true
	bare.Tr, bare.ConnectDial, bare.KeepAcceptEncoding = tr, nil, true
	bare.CertStore = mitm.NewCertStore(0, nil)
	action := &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: goproxy.TLSConfigFromCA(ca)}
	bare.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		return action, host
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: bare}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return &httpsProxy{url: &url.URL{Scheme: "http", Host: ln.Addr().String()}}
}

// benchLoop sends the benchmark's requests with c to the origin at base,
// one path (mixed: the load script's eight paths in turn), and returns
// how many it sent. Paths under /private are answered 403 by robotsgate
// (refusing).
func benchLoop(b *testing.B, c *http.Client, base string, mixed, refusing bool) int {
	return benchRequests(b, b.Loop, c, base, mixed, refusing)
}

// benchRequests is benchLoop with next saying whether to send one more.
func benchRequests(b *testing.B, next func() bool, c *http.Client, base string, mixed, refusing bool) int {
	paths := []string{"/public/page"}
	if mixed {
		paths = mixedPaths
	}
	n := 0
	for next() {
		path := paths[n%len(paths)]
		want := 200
		if refusing && strings.HasPrefix(path, "/private") {
			want = http.StatusForbidden
		}
		benchGet(b, c, base+path, want)
		n++
	}
	return n
}

func benchGet(b *testing.B, c *http.Client, u string, want int) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// processCPU returns the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
