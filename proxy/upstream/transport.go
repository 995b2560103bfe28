// Package upstream is the outbound side of robotsgate's connections: the
// transports of proxied requests and of policy fetches and the dialers
// under them (transport.go), resolve once and pin (pins.go), the egress
// check of every address dialled (egressdial.go), the idle pool's
// connections (idleconns.go), a policy fetch's clean connection handed to
// the next proxied request (firstexchange.go, handoff.go, connquiet_*.go),
// and the bytes of a tunnel: its ClientHello read and checked
// (tunnelhello.go), the two sides spliced (tunnelsplice.go).
package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/mitm"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// The two outbound transports and the dialers under them: proxied
// requests ([NewTransport]) and the policy files robotsgate fetches itself
// ([NewPolicyTransport]), which never share a connection. Every
// connection either opens goes to one address that was checked: the
// address a request was pinned to (pins.go), whose own robots.txt decided
// it, or, for a policy fetch, the address its Store key names
// ([enforce.FetchPinOf]). The Server applies the dialer wrappers, in one
// order.

// Config is what the outbound transports are built from.
type Config struct {
	Proxy *url.URL // an upstream proxy named on purpose; nil: connect directly
	Roots []string // PEM files of roots trusted besides the system roots

	// The idle pool of proxied requests.
	MaxIdleConns, MaxIdleConnsPerHost int
	IdleTimeout                       time.Duration
}

// Outbound transport settings. goproxy's default transport has no
// timeouts and keeps two idle connections per host; these bound every
// phase of a request, and the upstream: section sizes the idle pool.
const (
	dialTimeout           = 10 * time.Second
	DialKeepAlive         = 30 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 60 * time.Second
)

// NewTransport returns the outbound [http.Transport] of proxied requests.
// It connects directly, ignoring HTTP(S)_PROXY in the environment (a
// sidecar whose environment points at itself would loop), unless
// cfg.Proxy names a proxy on purpose. TLS verification uses the
// system roots plus https.upstream_roots.
func NewTransport(cfg Config) (*http.Transport, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: DialKeepAlive}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:       cfg.IdleTimeout,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if cfg.Proxy != nil {
		tr.Proxy = http.ProxyURL(cfg.Proxy)
	}
	if err := setUpstreamTLS(tr, cfg.Roots); err != nil {
		return nil, err
	}
	return tr, nil
}

// errEarlyResponse is the error of a read that returned bytes on a
// policy-file connection before its request was written.
var errEarlyResponse = errors.New("the origin sent data before the request was written: not taken as an answer")

// policyWriteBuffer is the write buffer of a policy-file connection:
// enough for the request head robotsgate writes (longer ones are written
// in several pieces).
const policyWriteBuffer = 1 << 10

// NewPolicyTransport returns the transport of the policy files robotsgate
// fetches itself (robots.txt, tdmrep.json), apart from the transport of
// proxied requests so that no byte a client chose ever travels on a
// connection a policy file is read from. A client that smuggles a second
// request in the body of an allowed one (to an origin that ignores a body
// it did not expect) can only desynchronise a connection of the proxied
// pool; a policy fetch never takes one.
//
// Its connections are not reused among policy fetches: each
// origin's robots.txt is fetched once per cache lifetime, so a kept
// connection would almost never serve a second fetch, while a broad crawl
// (many origins, one fetch each) would fill a pool with idle sockets. One
// connection per fetch also means one request per connection, so a
// response cannot belong to an earlier request: every connection is
// guarded ([writeFirstConn]) so that one delivering bytes before its
// request was written (before its TLS handshake began, for https) fails
// the fetch (robots-unreachable) instead of answering it. HTTP/2 is not
// used, for the same reason. A Server may hand a plain-HTTP fetch's
// connection that ended cleanly, one way, to a proxied request
// (handoff.go).
//
// It shares the rest with [NewTransport]: no proxy from the environment
// unless cfg.Proxy names one, the timeouts, and the upstream
// roots for TLS. A Server adds its own dialer wrappers under the guard;
// "robotsgate check -fetch" uses it as it is.
func NewPolicyTransport(cfg Config) (*http.Transport, error) {
	// No TCP keep-alive probes: a policy connection carries one request,
	// bounded by the fetch's timeouts.
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: -1}
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       d.DialContext,
		DisableKeepAlives: true,
		// The fetcher asks for and decodes encodings itself; an empty
		// TLSNextProto keeps HTTP/1.1 (one request per connection).
		DisableCompression:    true,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		// A policy request is a GET with a few headers: a small write
		// buffer, allocated once per connection, is garbage sooner.
		WriteBufferSize: policyWriteBuffer,
	}
	if cfg.Proxy != nil {
		tr.Proxy = http.ProxyURL(cfg.Proxy)
	}
	if err := setUpstreamTLS(tr, cfg.Roots); err != nil {
		return nil, err
	}
	guard := func(c net.Conn) net.Conn { return &writeFirstConn{Conn: c} }
	tr.DialContext = guardedDial(tr.DialContext, guard)
	tr.DialTLSContext = DialTLS(tr, []string{"http/1.1"}, guard)
	return tr, nil
}

// setUpstreamTLS makes tr verify upstream certificates against the system
// roots plus the PEM files of extra roots. With no extra roots it leaves tr on the
// system roots. Both transports get it, so both trust the same roots.
func setUpstreamTLS(tr *http.Transport, files []string) error {
	if len(files) == 0 {
		return nil
	}
	roots, err := mitm.UpstreamRootCAs(files)
	if err != nil {
		return err
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = roots
	return nil
}

// OrDefault returns dial, or a plain dialer's when it is nil.
func OrDefault(dial selfaddr.DialFunc, keepAlive time.Duration) selfaddr.DialFunc {
	if dial == nil {
		return (&net.Dialer{Timeout: dialTimeout, KeepAlive: keepAlive}).DialContext
	}
	return dial
}

// PinPolicyFetch returns dial with the connections of a policy fetch for
// an address-keyed entry ([enforce.FetchPinOf]) pinned to that address for
// its host: the dialer then connects there or nowhere; never to
// robotsgate itself.
func PinPolicyFetch(self *selfaddr.Set, dial selfaddr.DialFunc) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p, ok := enforce.FetchPinOf(ctx); ok && p.SameHost(addr) {
			host, port, _ := net.SplitHostPort(addr)
			n, ok := selfaddr.ParsePort(port)
			if !ok {
				return nil, fmt.Errorf("dial %s: invalid port %q", addr, port)
			}
			if self.IsSelf(n, p.Addr) {
				return nil, fmt.Errorf("dial %s: %w", addr, selfaddr.ErrSelfDial)
			}
			ctx = selfaddr.WithPin(ctx, selfaddr.PinTo(host, n, p.Addr))
		}
		return dial(ctx, network, addr)
	}
}

// guardedDial returns dial with each connection wrapped by wrap.
func guardedDial(dial selfaddr.DialFunc, wrap func(net.Conn) net.Conn) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
}

// DialTLS returns the TLS dialer of tr: tr.DialContext as it is when it
// dials (so the wrappers installed later apply), then a TLS handshake
// with tr's TLS settings, the server name being the name the request is
// pinned to ([selfaddr.Pin.PoolHost] is not a name) or else the host
// dialed. protos are the ALPN protocols (nil: tr's own, HTTP/2 included);
// wrap, when not nil, wraps the TLS connection.
func DialTLS(tr *http.Transport, protos []string, wrap func(net.Conn) net.Conn) selfaddr.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		if pin := selfaddr.PinFrom(ctx); pin != nil && pin.PoolHost() != "" && pin.PoolHost() == host {
			host = pin.Host()
		}
		raw, err := tr.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := tr.TLSClientConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		if protos != nil {
			cfg.NextProtos = protos
		} else if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"http/1.1"}
		}
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, err
		}
		if wrap != nil {
			return wrap(tc), nil
		}
		return tc, nil
	}
}

// writeFirstConn is a connection that carries one request: a read that
// returns bytes before anything was written fails with [errEarlyResponse]
// and closes the connection.
type writeFirstConn struct {
	net.Conn
	wrote atomic.Bool
}

// NetConn returns the connection guarded.
func (c *writeFirstConn) NetConn() net.Conn { return c.Conn }

func (c *writeFirstConn) Write(p []byte) (int, error) {
	c.wrote.Store(true) // before the bytes can reach the peer
	return c.Conn.Write(p)
}

func (c *writeFirstConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.wrote.Load() {
		c.Conn.Close()
		return 0, errEarlyResponse
	}
	return n, err
}

// RoundTrip forwards req with tr, the transport of proxied requests: traced
// for the idle pool (idleconns.go), and given to the transport under its
// pin's [selfaddr.Pin.PoolHost] when it has one, so that it never leaves
// on a connection to another address of its name; the response names
// req. With handoff, a plain-HTTP request may take the connection its
// robots.txt was fetched on (handoff.go).
func RoundTrip(tr http.RoundTripper, req *http.Request, handoff bool) (*http.Response, error) {
	out := req
	if pool := selfaddr.PinFrom(req.Context()).PoolHost(); pool != "" {
		u := *req.URL
		u.Host = pool
		if _, port, err := net.SplitHostPort(req.URL.Host); err == nil {
			u.Host = net.JoinHostPort(pool, port)
		}
		out = req.WithContext(req.Context())
		out.URL = &u
		if out.Host == "" {
			out.Host = req.URL.Host
		}
	}
	resp, err := tr.RoundTrip(traced(out.Context(), out, handoff))
	if resp != nil {
		resp.Request = req
	}
	return resp, err
}
