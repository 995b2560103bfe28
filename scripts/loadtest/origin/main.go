// Command origin is the load test's origin: it serves the same small site on
// several loopback ports (each port is a separate robots.txt origin).
//
//	origin -base 18000 -n 16
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const robotsTxt = `User-agent: *
Disallow: /private/
Allow: /private/open
Disallow: /*.pdf$

User-agent: loadbot
Disallow: /private/
Disallow: /tmp/
`

func main() {
	base := flag.Int("base", 18000, "first port")
	n := flag.Int("n", 16, "number of ports (origins)")
	flag.Parse()
	if *n < 1 || *n > 256 {
		log.Fatalf("origin: -n must be 1..256")
	}
	page := []byte(strings.Repeat("robotsgate load test page\n", 40)) // ~1 KiB
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, robotsTxt)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(page)
	})
	for i := 0; i < *n; i++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *base+i))
		if err != nil {
			log.Fatalf("origin: %v", err)
		}
		go http.Serve(ln, h)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
