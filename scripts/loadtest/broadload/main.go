// Command broadload is the broad-crawl load generator: it sends a few
// requests to each of n origins (127.a.b.c:port, see broadorigin) through
// a proxy, one origin after another on c workers, one in 25 URLs under
// [robotsmix.Blocked], and prints what it measured as key=value lines: new
// origins per second, the latency of the first request to an origin
// (p50, p99), statuses and errors. With -direct it also times a direct
// robots.txt fetch from a sample of origins (the round trip the proxy adds
// to a first request).
//
//	broadload -proxy http://127.0.0.1:9309 -n 10000 -c 64 -first 0
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsgate/robotsgate/internal/robotsmix"
)

// addr returns origin i's address: 127.a.b.c with c in 1..254.
func addr(i, port int) string {
	c := i%254 + 1
	ab := i / 254
	return net.JoinHostPort(net.IPv4(127, byte(ab/256), byte(ab%256), byte(c)).String(), fmt.Sprint(port))
}

func main() {
	proxy := flag.String("proxy", "", "proxy URL")
	n := flag.Int("n", 10000, "origins")
	first := flag.Int("first", 0, "number of the first origin")
	per := flag.Int("per", 1, "requests per origin")
	c := flag.Int("c", 64, "concurrent workers")
	port := flag.Int("port", 18080, "origins' port")
	limit := flag.Duration("timeout", 10*time.Minute, "bound of the whole run")
	direct := flag.Int("direct", 0, "also time direct robots.txt fetches of this many origins")
	flag.Parse()
	pu, err := url.Parse(*proxy)
	if err != nil || *proxy == "" {
		fmt.Fprintln(os.Stderr, "broadload: -proxy URL required")
		os.Exit(2)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConns: *c, MaxIdleConnsPerHost: *c, DisableCompression: true}
	r := run{client: &http.Client{Transport: tr, Timeout: 60 * time.Second}, n: *n, first: *first, per: *per, port: *port,
		firstLat: make([]time.Duration, *n), deadline: time.Now().Add(*limit)}
	start := time.Now()
	var wg sync.WaitGroup
	for range *c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker()
		}()
	}
	wg.Wait()
	r.report(time.Since(start))
	if *direct > 0 {
		timeDirect(*direct, *first, *port)
	}
}

// timeDirect prints the p50 of a robots.txt fetch on a new connection,
// without the proxy, from m origins.
func timeDirect(m, first, port int) {
	var ds []time.Duration
	for i := range m {
		tr := &http.Transport{DisableKeepAlives: true}
		t0 := time.Now()
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + addr(first+i, port) + "/robots.txt")
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	if len(ds) > 0 {
		fmt.Printf("direct_robots_p50_ms=%.3f\n", float64(ds[len(ds)/2].Microseconds())/1000)
	}
}

// run is one load run: the origins, and what was measured.
type run struct {
	client                  *http.Client
	n, first, per, port     int
	deadline                time.Time
	firstLat                []time.Duration // of origin i's first request; 0 when it failed
	next, errs, ok, blocked atomic.Int64
	other                   atomic.Int64
}

// worker takes the next origin until all are done or the run's time is
// up, and sends its requests.
func (r *run) worker() {
	for time.Now().Before(r.deadline) {
		i := int(r.next.Add(1)) - 1
		if i >= r.n {
			return
		}
		host := addr(r.first+i, r.port)
		for k := range r.per {
			path := fmt.Sprintf("/page/%d/%d", i, k)
			if (i*r.per+k)%25 == 0 {
				path = robotsmix.Blocked + fmt.Sprint(i)
			}
			t0 := time.Now()
			resp, err := r.client.Get("http://" + host + path)
			if err != nil {
				r.errs.Add(1)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if k == 0 {
				r.firstLat[i] = time.Since(t0)
			}
			switch resp.StatusCode {
			case http.StatusOK:
				r.ok.Add(1)
			case http.StatusForbidden:
				r.blocked.Add(1)
			default:
				r.other.Add(1)
			}
		}
	}
}

// report prints what the run measured in took.
func (r *run) report(took time.Duration) {
	done := min(int(r.next.Load()), r.n)
	lat := slices.DeleteFunc(r.firstLat[:done], func(d time.Duration) bool { return d == 0 })
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("origins=%d seconds=%.2f origins_per_s=%.0f ok=%d blocked=%d other=%d errors=%d first_p50_ms=%.3f first_p99_ms=%.3f\n",
		done, took.Seconds(), float64(done)/took.Seconds(), r.ok.Load(), r.blocked.Load(), r.other.Load(), r.errs.Load(),
		float64(q(0.5).Microseconds())/1000, float64(q(0.99).Microseconds())/1000)
}
