// Command bareproxy is the load test's yardstick: a bare goproxy forwarder
// with no robots.txt enforcement, built from the same goproxy version and the
// same outbound transport ([proxy.NewTransport]) as robotsgate. With -mitm it
// intercepts CONNECT with the same CA (-data-dir) and the same leaf
// certificate cache ([mitm.CertStore]) as robotsgate.
//
//	bareproxy -listen 127.0.0.1:19310 [-mitm -data-dir DIR -upstream-roots cert.pem]
package main

import (
	"flag"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19310", "listen address")
	intercept := flag.Bool("mitm", false, "intercept CONNECT (MITM) with the CA in -data-dir")
	dataDir := flag.String("data-dir", "", "directory of the CA (as robotsgate's -data-dir)")
	roots := flag.String("upstream-roots", "", "comma-separated PEM files of extra upstream roots")
	flag.Parse()
	cfg := config.Default()
	if *roots != "" {
		cfg.HTTPS.UpstreamRoots = strings.Split(*roots, ",")
	}
	tr, err := proxy.NewTransport(cfg)
	if err != nil {
		log.Fatalf("bareproxy: %v", err)
	}
	p := goproxy.NewProxyHttpServer()
	p.Tr = tr
	p.ConnectDial = nil
	p.Verbose = false
	if *intercept {
		ca, _, err := mitm.LoadOrCreateCA(*dataDir, "", "", nil)
		if err != nil {
			log.Fatalf("bareproxy: %v", err)
		}
		p.CertStore = mitm.NewCertStore(1024, nil)
		action := &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: goproxy.TLSConfigFromCA(ca)}
		p.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
			return action, host
		})
	}
	srv := &http.Server{Addr: *listen, Handler: p, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
