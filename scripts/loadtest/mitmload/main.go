// Command mitmload is the load script's HTTPS client (wrk cannot send
// CONNECT): -c workers, each with its own keep-alive connections, send GETs
// through the proxy to https://127.0.0.1:PORT/... over -n origins for
// -d, trusting the proxy's CA. It prints the same summary lines wrk does
// ("N requests in", "Requests/sec:", "99%", "Non-2xx").
//
//	mitmload -proxy http://127.0.0.1:19309 -ca ca.pem -base 18500 -n 16 -c 16 -d 5s
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	proxyURL := flag.String("proxy", "http://127.0.0.1:19309", "proxy URL")
	caFile := flag.String("ca", "", "PEM file of the CA the proxy signs with")
	base := flag.Int("base", 18500, "first HTTPS origin port")
	n := flag.Int("n", 16, "number of origins")
	conns := flag.Int("c", 16, "concurrent workers")
	dur := flag.Duration("d", 5*time.Second, "duration (bounded to 60s)")
	maxReq := flag.Int("max", 2_000_000, "stop after this many requests in all")
	allowedOnly := flag.Bool("allowed-only", false, "only URLs robots.txt allows")
	direct := flag.Bool("direct", false, "no proxy: connect to the origins themselves as https://localhost:port (over IPv4), "+
		"for a robotsgate that intercepts the connections (transparent listener)")
	flag.Parse()
	if *dur <= 0 || *dur > time.Minute || *conns < 1 || *conns > 1024 || *n < 1 || *n > 256 {
		log.Fatal("mitmload: -d must be in (0, 60s], -c in 1..1024, -n in 1..256")
	}
	pool, err := loadCA(*caFile)
	if err != nil {
		log.Fatalf("mitmload: %v", err)
	}
	pu, err := url.Parse(*proxyURL)
	if err != nil {
		log.Fatalf("mitmload: %v", err)
	}
	host := "127.0.0.1"
	if *direct {
		pu, host = nil, "localhost" // a name, so that the ClientHello carries it
	}
	l := &load{proxy: pu, roots: pool, urls: targets(host, *base, *n, *allowedOnly), conns: *conns,
		deadline: time.Now().Add(*dur), budget: *maxReq}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < *conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work(w)
		}()
	}
	wg.Wait()
	l.report(time.Since(start))
}

// loadCA returns a pool holding the certificates of the PEM file name.
func loadCA(name string) (*x509.CertPool, error) {
	pemBytes, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		return nil, fmt.Errorf("no certificate in %s", name)
	}
	return pool, nil
}

// targets returns the URLs the workers cycle through: every path on each
// of the n origins from port base on (the allowed paths only, if asked).
func targets(host string, base, n int, allowedOnly bool) []string {
	paths := []string{"/", "/page/1", "/a/b/c?x=1", "/news/2026/11/22/story.html", "/img/logo.png",
		"/private/secret", "/files/report.pdf", "/private/open/doc"}
	if allowedOnly {
		paths = paths[:5]
	}
	var urls []string
	for i := 0; i < n; i++ {
		for _, p := range paths {
			urls = append(urls, fmt.Sprintf("https://%s:%d%s", host, base+i, p))
		}
	}
	return urls
}

// load is one run: its settings, and the results the workers add up.
type load struct {
	proxy    *url.URL
	roots    *x509.CertPool
	urls     []string
	conns    int
	deadline time.Time

	mu       sync.Mutex
	budget   int // requests left to send, in all
	lat      []time.Duration
	non2xx   int
	errs     int
	firstErr error
}

// take claims one request of the budget; false when it is spent.
func (l *load) take() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budget == 0 {
		return false
	}
	l.budget--
	return true
}

// work is worker w: its own keep-alive connections, every conns-th URL
// from the w-th on, until the deadline or the budget is reached.
func (l *load) work(w int) {
	var d net.Dialer
	tr := &http.Transport{
		Proxy: http.ProxyURL(l.proxy), // nil: direct
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp4", addr) // localhost is 127.0.0.1, where the origins listen
		},
		TLSClientConfig:     &tls.Config{RootCAs: l.roots},
		MaxIdleConnsPerHost: 4,
		ForceAttemptHTTP2:   false,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mine []time.Duration
	var bad, failed int
	var firstErr error
	for i := w; time.Now().Before(l.deadline) && l.take(); i += l.conns {
		t0 := time.Now()
		req, _ := http.NewRequest(http.MethodGet, l.urls[i%len(l.urls)], nil)
		req.Header.Set("User-Agent", "loadbot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		mine = append(mine, time.Since(t0))
		if resp.StatusCode/100 != 2 {
			bad++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lat = append(l.lat, mine...)
	l.non2xx += bad
	l.errs += failed
	if l.firstErr == nil {
		l.firstErr = firstErr
	}
}

// report prints wrk's summary lines for the run that took elapsed.
func (l *load) report(elapsed time.Duration) {
	slices.Sort(l.lat)
	p99 := time.Duration(0)
	if len(l.lat) > 0 {
		p99 = l.lat[(len(l.lat)*99)/100]
	}
	fmt.Printf("  %d requests in %.2fs\n", len(l.lat), elapsed.Seconds())
	fmt.Printf("Requests/sec: %.2f\n", float64(len(l.lat))/elapsed.Seconds())
	fmt.Printf("     99%%   %.2fms\n", float64(p99.Microseconds())/1000)
	if l.non2xx > 0 {
		fmt.Printf("  Non-2xx or 3xx responses: %d\n", l.non2xx)
	}
	if l.errs > 0 {
		fmt.Fprintf(os.Stderr, "mitmload: %d requests failed; first: %v\n", l.errs, l.firstErr)
	}
}
