// Command fleetload measures a fleet of robotsgate replicas on one Redis
// (standalone, Sentinel or Cluster): it serves N origins itself (one
// loopback port each; odd ones with a Crawl-delay), sends requests through
// the replicas round-robin, and reports requests per second and the Redis
// commands per request (INFO commandstats of every Redis node, before and
// after) for three request shapes: first visit, cached without
// Crawl-delay, cached with Crawl-delay; then a mixed run over every origin.
// Every phase is bounded in requests and in time.
//
//	fleetload -proxies 127.0.0.1:8081,127.0.0.1:8082 -redis 127.0.0.1:6379 -n 1000 -dur 10s
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	proxies := flag.String("proxies", "", "comma-separated robotsgate listen addresses")
	nodes := flag.String("redis", "", "comma-separated Redis node addresses (all primaries of a cluster)")
	n := flag.Int("n", 1000, "origins")
	delay := flag.String("delay", "0.5", "Crawl-delay of the odd origins (seconds)")
	conc := flag.Int("c", 64, "concurrent requests")
	dur := flag.Duration("dur", 10*time.Second, "bound of the mixed run")
	per := flag.Int("per", 2000, "requests of each single-shape phase")
	flag.Parse()
	if *proxies == "" || *nodes == "" {
		log.Fatal("fleetload: -proxies and -redis are required")
	}
	origins := serveOrigins(*n, *delay)
	var clients []*http.Client
	for _, p := range strings.Split(*proxies, ",") {
		tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p}), MaxIdleConnsPerHost: *conc}
		clients = append(clients, &http.Client{Transport: tr, Timeout: 60 * time.Second})
	}
	redisNodes := strings.Split(*nodes, ",")
	var even, odd []string
	for i, o := range origins {
		if i%2 == 0 {
			even = append(even, o)
		} else {
			odd = append(odd, o)
		}
	}
	fmt.Printf("%d origins (odd ones: Crawl-delay %s s), %d replicas, %d Redis node(s), %d concurrent requests\n",
		*n, *delay, len(clients), len(redisNodes), *conc)
	// Redis's own background work (cron, cluster bus), subtracted from
	// the CPU each phase used.
	_, c0 := redisCalls(redisNodes)
	time.Sleep(2 * time.Second)
	_, c1 := redisCalls(redisNodes)
	idle := float64(c1-c0) / 2 // µs of CPU per second
	fmt.Printf("Redis CPU while idle: %.1f ms/s (subtracted below)\n", idle/1000)
	phase("first visit (each origin once)", clients, redisNodes, origins, len(origins), 5*time.Minute, *conc, idle)
	phase("cached, no Crawl-delay", clients, redisNodes, even, *per, 2*time.Minute, *conc, idle)
	phase("cached, Crawl-delay (paced)", clients, redisNodes, odd, min(*per, len(odd)*2), 2*time.Minute, *conc, idle)
	phase("mixed run, every origin", clients, redisNodes, origins, 1<<30, *dur, *conc, idle)
}

// serveOrigins starts n origins on loopback and returns their URLs.
func serveOrigins(n int, delay string) []string {
	var urls []string
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatalf("fleetload: origin %d: %v (raise ulimit -n)", i, err)
		}
		robots := "User-agent: *\nDisallow: /private\n"
		if i%2 == 1 {
			robots += "Crawl-delay: " + delay + "\n"
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, robots)
				return
			}
			io.WriteString(w, "page\n")
		})
		go func() { _ = http.Serve(l, h) }()
		urls = append(urls, "http://"+l.Addr().String())
	}
	return urls
}

// phase sends up to count requests (bounded by bound) over origins, in
// turn, through the replicas, and prints requests/s, statuses, Redis
// commands and Redis CPU (less idle µs per second) per request.
func phase(name string, clients []*http.Client, nodes, origins []string, count int, bound time.Duration, conc int, idle float64) {
	before, usecBefore := redisCalls(nodes)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", origins[i%len(origins)]+"/page", nil)
				st := 0
				if resp, err := clients[(i+w)%len(clients)].Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					st = resp.StatusCode
				} else if ctx.Err() != nil {
					return // cut by the phase's time bound: not counted
				}
				mu.Lock()
				statuses[st]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	after, usecAfter := redisCalls(nodes)
	calls := after - before - 2*int64(len(nodes)) // the INFO calls themselves
	done := 0
	for _, c := range statuses {
		done += c
	}
	fmt.Printf("%-34s %7d requests in %6.2fs: %8.0f req/s; per request: %.2f Redis commands, %.1f µs of Redis CPU (all nodes); statuses %v\n",
		name, done, took.Seconds(), float64(done)/took.Seconds(), float64(calls)/float64(max(done, 1)),
		max(float64(usecAfter-usecBefore)-idle*took.Seconds(), 0)/float64(max(done, 1)), statuses)
}

// redisCalls returns the sum of the "calls" of INFO commandstats over
// nodes (commands run by scripts included), and of their CPU time
// (used_cpu_user + used_cpu_sys of INFO cpu, in µs).
func redisCalls(nodes []string) (total, usec int64) {
	for _, addr := range nodes {
		for l := range strings.SplitSeq(info(addr, "commandstats")+info(addr, "cpu"), "\r\n") {
			if _, stats, ok := strings.Cut(l, ":calls="); ok {
				v, _, _ := strings.Cut(stats, ",")
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
			if k, v, ok := strings.Cut(l, ":"); ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
				f, _ := strconv.ParseFloat(v, 64)
				usec += int64(f * 1e6)
			}
		}
	}
	return total, usec
}

// info returns the INFO section of the Redis node at addr.
func info(addr, section string) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		log.Fatalf("fleetload: redis %s: %v", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "INFO %s\r\n", section)
	rd := bufio.NewReader(c)
	head, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		log.Fatalf("fleetload: redis %s: INFO: %q %v", addr, head, err)
	}
	size, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, size)
	if _, err := io.ReadFull(rd, body); err != nil {
		log.Fatalf("fleetload: redis %s: %v", addr, err)
	}
	return string(body)
}

func init() { log.SetOutput(os.Stderr) }
