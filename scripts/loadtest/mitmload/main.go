// Command mitmload is the load script's HTTPS client (wrk cannot send
// CONNECT): -c workers, each with its own keep-alive connections, send GETs
// through the proxy to https://127.0.0.1:PORT/... over -n origins for
// -d, trusting the proxy's CA. It prints the same summary lines wrk does
// ("N requests in", "Requests/sec:", "99%", "Non-2xx").
//
//	mitmload -proxy http://127.0.0.1:19309 -ca ca.pem -base 18500 -n 16 -c 16 -d 5s
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
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
	flag.Parse()
	if *dur <= 0 || *dur > time.Minute || *conns < 1 || *conns > 1024 || *n < 1 || *n > 256 {
		log.Fatal("mitmload: -d must be in (0, 60s], -c in 1..1024, -n in 1..256")
	}
	pemBytes, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatalf("mitmload: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		log.Fatalf("mitmload: no certificate in %s", *caFile)
	}
	pu, err := url.Parse(*proxyURL)
	if err != nil {
		log.Fatalf("mitmload: %v", err)
	}
	paths := []string{"/", "/page/1", "/a/b/c?x=1", "/news/2026/11/22/story.html", "/img/logo.png",
		"/private/secret", "/files/report.pdf", "/private/open/doc"}
	if *allowedOnly {
		paths = paths[:5]
	}
	var urls []string
	for i := 0; i < *n; i++ {
		for _, p := range paths {
			urls = append(urls, fmt.Sprintf("https://127.0.0.1:%d%s", *base+i, p))
		}
	}

	deadline := time.Now().Add(*dur)
	var (
		mu       sync.Mutex
		lat      []time.Duration
		non2xx   int
		errs     int
		total    int
		budget   = *maxReq
		wg       sync.WaitGroup
		firstErr error
	)
	start := time.Now()
	for w := 0; w < *conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tr := &http.Transport{
				Proxy:               http.ProxyURL(pu),
				TLSClientConfig:     &tls.Config{RootCAs: pool},
				MaxIdleConnsPerHost: 4,
				ForceAttemptHTTP2:   false,
			}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			var mine []time.Duration
			var bad, failed int
			for i := w; time.Now().Before(deadline); i += *conns {
				mu.Lock()
				if budget == 0 {
					mu.Unlock()
					break
				}
				budget--
				mu.Unlock()
				t0 := time.Now()
				req, _ := http.NewRequest(http.MethodGet, urls[i%len(urls)], nil)
				req.Header.Set("User-Agent", "loadbot/1.0")
				resp, err := client.Do(req)
				if err != nil {
					failed++
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				if resp.StatusCode/100 != 2 {
					bad++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			non2xx += bad
			errs += failed
			total += len(mine)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	p99 := time.Duration(0)
	if len(lat) > 0 {
		p99 = lat[(len(lat)*99)/100]
	}
	fmt.Printf("  %d requests in %.2fs\n", total, elapsed.Seconds())
	fmt.Printf("Requests/sec: %.2f\n", float64(total)/elapsed.Seconds())
	fmt.Printf("     99%%   %.2fms\n", float64(p99.Microseconds())/1000)
	if non2xx > 0 {
		fmt.Printf("  Non-2xx or 3xx responses: %d\n", non2xx)
	}
	if errs > 0 {
		fmt.Fprintf(os.Stderr, "mitmload: %d requests failed; first: %v\n", errs, firstErr)
	}
}
