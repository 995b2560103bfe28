package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthTimeout bounds one health probe.
const healthTimeout = 3 * time.Second

// runHealth is "robotsgate health": it reads the configuration exactly as
// serve does (same flags, environment and file), GETs /healthz of the
// admin address (admin_listen, else listen; a wildcard host is probed on
// loopback) and exits 0 when it answers 200, 1 otherwise. It is the
// container HEALTHCHECK: distroless images have no shell or curl.
func runHealth(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(args, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "Usage: robotsgate health [serve flags]\n\nExits 0 when the robotsgate configured by the same flags, environment and file answers GET /healthz.")
		return 0
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	addr := cfg.AdminListen
	if addr == "" {
		addr = cfg.Listen
	}
	target, err := probeAddr(addr)
	if err != nil {
		return fail(stderr, 2, err)
	}
	if err := probeHealth(ctx, "http://"+target+"/healthz"); err != nil {
		return fail(stderr, 1, err)
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// probeAddr returns the address to dial for the listen address addr:
// a wildcard or empty host becomes the loopback address of its family.
func probeAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("health: address %q: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

// probeHealth GETs url directly (never through HTTP_PROXY) and fails
// unless the answer is 200.
func probeHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: GET %s: %s", url, resp.Status)
	}
	return nil
}
