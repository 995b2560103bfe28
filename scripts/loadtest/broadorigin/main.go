// Command broadorigin is the broad-crawl load test's origins: one HTTP
// server that answers on every loopback address (127.0.0.0/8) of its
// network namespace, each address a distinct origin with its own
// robots.txt drawn from the realistic mix (internal/robotsmix). The
// broad-crawl script runs it in a network namespace of its own, where
// loopback is the only interface.
//
//	broadorigin -listen 0.0.0.0:18080
package main

import (
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/robotsgate/robotsgate/internal/robotsmix"
)

// Index returns the origin number of a loopback address 127.a.b.c, as
// broadload numbers them (c in 1..254).
func index(ip net.IP) int {
	ip = ip.To4()
	if ip == nil || ip[0] != 127 || ip[3] == 0 || ip[3] == 255 {
		return -1
	}
	return (int(ip[1])*256+int(ip[2]))*254 + int(ip[3]) - 1
}

func main() {
	listen := flag.String("listen", "0.0.0.0:18080", "listen address (run it in a network namespace with loopback only)")
	flag.Parse()
	page := []byte("broad crawl page\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		tcp, _ := local.(*net.TCPAddr)
		if tcp == nil || !tcp.IP.IsLoopback() {
			http.Error(w, "loopback only", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/robots.txt" {
			i := index(tcp.IP)
			if i < 0 {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Write(robotsmix.File(i, r.Host))
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Write(page)
	})
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatalf("broadorigin: %v", err)
	}
}
