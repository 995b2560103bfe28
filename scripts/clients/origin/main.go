// Command origin serves the client tests' sites on loopback: a plain-HTTP
// origin, an HTTPS origin (self-signed certificate for 127.0.0.1 and
// localhost, written to <dir>/origin.pem for robotsgate's
// https.upstream_roots) and a plain-HTTP "polite" origin whose robots.txt
// states a Crawl-delay. Each robots.txt disallows /private. It writes the
// ports to <dir>/ports.env (sourced by run.sh) and serves until killed.
//
// GET /styled?QUERY is a page whose stylesheet, /private/style.css?QUERY,
// is disallowed; an inline script after it sets the page's title to
// "styled" or "unstyled" (whether the stylesheet applied), which the
// browser rows of run.sh read. The query names the client, so each
// client's requests are its own lines in robotsgate's audit log.
//
// GET /forbidden is the origin's own 403 (robots.txt allows it).
//
// GET /__hits on any origin answers the number of requests for /private
// paths it served, except /private/probe* (the pitfall probes reach the
// origin on purpose): run.sh checks that it stays 0.
//
// A fourth listener (CONNECT_PORT) plays a proxy that refuses every
// CONNECT after appending its User-Agent ("-" when none) to
// <dir>/connect-ua.txt: run.sh points each client at it to record which
// clients name themselves on CONNECT (what tunnel mode decides by).
//
//	origin -dir /tmp/x [-crawl-delay 2]
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"html"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsgate/robotsgate/scripts/internal/selfsigned"
)

func main() {
	dir := flag.String("dir", "", "directory for origin.pem and ports.env")
	crawlDelay := flag.String("crawl-delay", "2", "Crawl-delay (seconds) of the polite origin's robots.txt")
	flag.Parse()
	if *dir == "" {
		log.Fatal("origin: -dir is required")
	}
	if _, err := strconv.ParseFloat(*crawlDelay, 64); err != nil {
		log.Fatalf("origin: -crawl-delay %q is not a number", *crawlDelay)
	}
	if err := run(*dir, *crawlDelay); err != nil {
		log.Fatalf("origin: %v", err)
	}
}

func run(dir, crawlDelay string) error {
	cert, err := selfsigned.Write(filepath.Join(dir, "origin.pem"), "robotsgate client-test origin")
	if err != nil {
		return err
	}
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	secure, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	polite, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	recorder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ports := fmt.Sprintf("HTTP_PORT=%d\nHTTPS_PORT=%d\nPOLITE_PORT=%d\nCONNECT_PORT=%d\n",
		port(plain), port(secure), port(polite), port(recorder))
	// Written last and renamed into place: run.sh waits for the file.
	tmp := filepath.Join(dir, "ports.env.tmp")
	if err := os.WriteFile(tmp, []byte(ports), 0o644); err != nil {
		return err
	}
	errc := make(chan error, 4)
	go func() {
		srv := &http.Server{Handler: connectRecorder(filepath.Join(dir, "connect-ua.txt")), ReadHeaderTimeout: 10 * time.Second}
		errc <- srv.Serve(recorder)
	}()
	serve := func(l net.Listener, robots string, tlsCert *tls.Certificate) {
		srv := &http.Server{Handler: site(robots), ReadHeaderTimeout: 10 * time.Second}
		if tlsCert != nil {
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*tlsCert}}
			errc <- srv.ServeTLS(l, "", "")
			return
		}
		errc <- srv.Serve(l)
	}
	const robots = "User-agent: *\nDisallow: /private\n"
	go serve(plain, robots, nil)
	go serve(secure, robots, &cert)
	go serve(polite, robots+"Crawl-delay: "+crawlDelay+"\n", nil)
	if err := os.Rename(tmp, filepath.Join(dir, "ports.env")); err != nil {
		return err
	}
	return <-errc
}

// site is one origin: robots.txt, /__hits, and a small page for any other
// path (with links to /page/1../page/5 so that crawlers find more URLs).
func site(robots string) http.Handler {
	var privateHits atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, robots)
			return
		case p == "/__hits":
			fmt.Fprintln(w, privateHits.Load())
			return
		case strings.HasPrefix(p, "/private") && !strings.HasPrefix(p, "/private/probe"):
			privateHits.Add(1)
			if p == "/private/style.css" {
				w.Header().Set("Content-Type", "text/css")
				fmt.Fprint(w, "#probe { color: rgb(255, 0, 0) }\n")
				return
			}
		case p == "/forbidden":
			http.Error(w, "the origin's own 403", http.StatusForbidden)
			return
		case p == "/styled":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, styledPage(r.URL.RawQuery))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>page %s</p>", r.URL.Path)
		if r.URL.Path == "/" {
			for i := 1; i <= 5; i++ {
				fmt.Fprintf(w, `<a href="/page/%d">page %d</a> `, i, i)
			}
			fmt.Fprint(w, `<a href="/private/secret">secret</a>`)
		}
		fmt.Fprint(w, "</body></html>\n")
	})
}

// styledPage is the /styled page: the title says whether the stylesheet
// /private/style.css?query applied (a script after a stylesheet link runs
// once the stylesheet has loaded or failed).
func styledPage(query string) string {
	css := "/private/style.css"
	if query != "" {
		css += "?" + html.EscapeString(query)
	}
	return `<!DOCTYPE html>
<html><head><title>loading</title><link rel="stylesheet" href="` + css + `"></head>
<body><p id="probe">page /styled</p>
<script>
document.title = getComputedStyle(document.getElementById("probe")).color === "rgb(255, 0, 0)" ? "styled" : "unstyled";
</script>
</body></html>
`
}

// connectRecorder answers every request 403; for a CONNECT it first
// appends the User-Agent ("-" when none) to file.
func connectRecorder(file string) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			ua := r.Header.Get("User-Agent")
			if ua == "" {
				ua = "-"
			}
			mu.Lock()
			err := appendLine(file, ua)
			mu.Unlock()
			if err != nil {
				log.Printf("origin: %v", err)
			}
		}
		w.Header().Set("Connection", "close")
		http.Error(w, "recorded", http.StatusForbidden)
	})
}

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }
