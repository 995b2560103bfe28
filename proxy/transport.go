package proxy

import (
	"net"
	"net/http"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
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
func NewTransport(cfg config.Config) (*http.Transport, error) {
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
	if cfg.UpstreamProxy != nil {
		tr.Proxy = http.ProxyURL(cfg.UpstreamProxy)
	}
	if err := setUpstreamTLS(tr, cfg.HTTPS); err != nil { // [https] system roots + https.upstream_roots (connect.go)
		return nil, err
	}
	return tr, nil
}
