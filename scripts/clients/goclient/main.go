// Command goclient is the Go row of the client table: it GETs each URL and
// prints its status code (one line per URL).
//
// With -proxy it sets Transport.Proxy to [http.ProxyURL], which proxies
// every request, loopback and localhost included. Without it, it uses
// [http.ProxyFromEnvironment] (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), which
// never proxies localhost or loopback addresses: run.sh uses that to show
// the pitfall. Extra roots (robotsgate's CA) come from SSL_CERT_FILE, as
// for any Go program on Linux. With -body it prints the bodies instead
// (run.sh reads the origins' counters with it).
//
//	goclient [-proxy http://127.0.0.1:9309] [-body] URL...
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	proxy := flag.String("proxy", "", "proxy URL; empty = http.ProxyFromEnvironment")
	body := flag.Bool("body", false, "print each body (trimmed) instead of the status code")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: goclient [-proxy URL] URL...")
		os.Exit(2)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if *proxy != "" {
		u, err := url.Parse(*proxy)
		if err != nil {
			fmt.Fprintf(os.Stderr, "goclient: -proxy: %v\n", err)
			os.Exit(2)
		}
		tr.Proxy = http.ProxyURL(u)
	}
	c := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	for _, u := range flag.Args() {
		code, b, err := get(c, u)
		if err != nil {
			fmt.Fprintf(os.Stderr, "goclient: %v\n", err)
			os.Exit(1)
		}
		if *body {
			fmt.Println(strings.TrimSpace(string(b)))
		} else {
			fmt.Println(code)
		}
	}
}

// get GETs u with c and returns the status code and the body.
func get(c *http.Client, u string) (int, []byte, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the body of %s: %w", u, err)
	}
	return resp.StatusCode, b, nil
}
