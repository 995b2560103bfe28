// Command bareproxy is the load test's yardstick: a bare goproxy forwarder
// with no robots.txt enforcement, built from the same goproxy version and the
// same outbound transport (proxy.NewTransport) as robotsgate.
//
//	bareproxy -listen 127.0.0.1:19310
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/proxy"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19310", "listen address")
	flag.Parse()
	tr, err := proxy.NewTransport(proxy.Default())
	if err != nil {
		log.Fatalf("bareproxy: %v", err)
	}
	p := goproxy.NewProxyHttpServer()
	p.Tr = tr
	p.ConnectDial = nil
	p.Verbose = false
	// As robotsgate (proxy.New): the client's Accept-Encoding passes
	// through, and the transport neither adds gzip nor decodes.
	p.KeepAcceptEncoding = true
	tr.DisableCompression = true
	srv := &http.Server{Addr: *listen, Handler: p, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
