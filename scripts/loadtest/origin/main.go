// Command origin is the load test's origin: it serves the same small site on
// several loopback ports (each port is a separate robots.txt origin), over
// plain HTTP and, with -tls-base, also over HTTPS with a self-signed
// certificate written to -tls-cert (for the proxies' upstream roots).
//
//	origin -base 18000 -n 16 [-tls-base 18500 -tls-cert cert.pem]
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/robotsgate/robotsgate/scripts/internal/selfsigned"
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
	base := flag.Int("base", 18000, "first plain-HTTP port")
	n := flag.Int("n", 16, "number of ports (origins) per scheme")
	tlsBase := flag.Int("tls-base", 0, "first HTTPS port; 0 = no HTTPS")
	tlsCert := flag.String("tls-cert", "", "where to write the HTTPS certificate (PEM), with -tls-base")
	flag.Parse()
	if *n < 1 || *n > 256 {
		log.Fatalf("origin: -n must be 1..256")
	}
	page := []byte(strings.Repeat("robotsgate load test page\n", 40)) // ~1 KiB
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robotsTxt)
			return
		}
		w.Write(page)
	})
	for i := 0; i < *n; i++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *base+i))
		if err != nil {
			log.Fatalf("origin: %v", err)
		}
		go http.Serve(ln, h)
	}
	if *tlsBase > 0 {
		if *tlsCert == "" {
			log.Fatal("origin: -tls-base needs -tls-cert")
		}
		cert, err := selfsigned.Write(*tlsCert, "robotsgate load test origin")
		if err != nil {
			log.Fatalf("origin: %v", err)
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
		for i := 0; i < *n; i++ {
			ln, err := tls.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *tlsBase+i), cfg)
			if err != nil {
				log.Fatalf("origin: %v", err)
			}
			go http.Serve(ln, h)
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
