package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Outbound transport settings. goproxy's default transport has no
// timeouts and keeps two idle connections per host; these numbers roughly
// double loopback throughput and bound every phase of a request.
const (
	dialTimeout           = 10 * time.Second
	dialKeepAlive         = 30 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 60 * time.Second
	idleConnTimeout       = 90 * time.Second
	maxIdleConns          = 4096
	maxIdleConnsPerHost   = 256
)

// NewTransport returns the outbound http.Transport shared by proxied
// requests and robots.txt fetches. It connects directly, ignoring
// HTTP(S)_PROXY in the environment (a sidecar whose environment points at
// itself would loop), unless cfg.UpstreamProxy names a proxy on purpose.
// TLS verification uses the system roots (the HTTPS section adds its own
// upstream roots to TLSClientConfig).
func NewTransport(cfg Config) (*http.Transport, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          maxIdleConns,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if cfg.UpstreamProxy != "" {
		u, err := parseUpstreamProxy(cfg.UpstreamProxy)
		if err != nil {
			return nil, err
		}
		tr.Proxy = http.ProxyURL(u)
	}
	if err := setUpstreamTLS(tr, cfg.HTTPS); err != nil { // [https] system roots + https.upstream_roots (connect.go)
		return nil, err
	}
	return tr, nil
}

// parseUpstreamProxy parses the upstream_proxy setting: an http:// or
// https:// URL with a host.
func parseUpstreamProxy(s string) (*url.URL, error) {
	// The errors never echo s: it may hold a password.
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return nil, fmt.Errorf("upstream_proxy: not a valid URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream_proxy: %q is not an http:// or https:// URL with a host", u.Redacted())
	}
	return u, nil
}
