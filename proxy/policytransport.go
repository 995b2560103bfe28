package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/robotsgate/robotsgate/internal/config"
)

// errEarlyResponse is the error of a read that returned bytes on a
// policy-file connection before its request was written.
var errEarlyResponse = errors.New("the origin sent data before the request was written: not taken as an answer")

// policyWriteBuffer is the write buffer of a policy-file connection:
// enough for the request head robotsgate writes (longer ones are written
// in several pieces).
const policyWriteBuffer = 1 << 10

// NewPolicyTransport returns the transport of the policy files robotsgate
// fetches itself (robots.txt), apart from the transport of proxied
// requests ([NewTransport]) so that no byte a client chose ever travels
// on a connection a policy file is read from. A client that smuggles a
// second request in the body of an allowed one (to an origin that ignores
// a body it did not expect) can only desynchronise a connection of the
// proxied pool; a policy fetch never takes one.
//
// Its connections are not reused, not even among policy fetches: each
// origin's robots.txt is fetched once per cache lifetime, so a kept
// connection would almost never serve a second fetch, while a broad crawl
// (many origins, one fetch each) would fill a pool with idle sockets. One
// connection per fetch also means one request per connection, so a
// response cannot belong to an earlier request: a connection that
// delivers bytes before its request was written (before its TLS
// handshake began, for https) fails the fetch (robots-unreachable)
// instead of answering it. HTTP/2 is not used, for the same reason.
//
// It shares the rest with NewTransport: no proxy from the environment
// unless cfg.UpstreamProxy names one, the timeouts, and the upstream
// roots for TLS; the Server installs the same self-address-refusing dialer
// on it ([Deps.PolicyTransport]).
func NewPolicyTransport(cfg config.Config) (*http.Transport, error) {
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
	if cfg.UpstreamProxy != nil {
		tr.Proxy = http.ProxyURL(cfg.UpstreamProxy)
	}
	if err := setUpstreamTLS(tr, cfg.HTTPS); err != nil {
		return nil, err
	}
	return tr, nil
}

// installSelf records the configured listen addresses ([Server.Serve]
// adds the real ones of its listeners), and makes the outbound transport's
// dialer ([selfaddr.Set.Dialer]) refuse robotsgate's own addresses and
// dial only the addresses [destination.onRequest] checked; the policy
// transport gets the same dialer.
func (s *Server) installSelf() {
	s.self.Add(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		s.self.Add(s.cfg.AdminListen)
	}
	for _, tr := range []*http.Transport{s.tr, s.ptr} {
		if tr == nil {
			continue
		}
		next := tr.DialContext
		if next == nil {
			next = (&net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive}).DialContext
		}
		tr.DialContext = s.self.Dialer(next)
	}
	s.installTransparent() // its address refused, outbound connections recorded (transparent.go)
	if s.ptr != nil {
		guardPolicyTransport(s.ptr) // (policytransport.go)
	}
}

// guardPolicyTransport makes every connection of tr, the policy
// transport, fail a read that returns bytes before anything was written
// on it, and, for https to the origin itself, before the HTTP request was
// written inside TLS. It wraps tr.DialContext as it is now (the
// self-address-refusing dialer), so call it after that is installed.
func guardPolicyTransport(tr *http.Transport) {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: -1}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &writeFirstConn{Conn: c}, nil
	}
	base := tr.TLSClientConfig
	tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		raw, err := tr.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{}
		if base != nil {
			cfg = base.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"http/1.1"}
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, err
		}
		return &writeFirstConn{Conn: tc}, nil
	}
}

// writeFirstConn is a connection that carries one request: a read that
// returns bytes before anything was written fails with [errEarlyResponse]
// and closes the connection.
type writeFirstConn struct {
	net.Conn
	wrote atomic.Bool
}

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

// NewFetchTransport is the policy transport as a Server fetches robots.txt
// with it, for a caller without a Server ("robotsgate check -fetch"):
// [NewPolicyTransport] with the guard against bytes that arrive before
// the request. Only the Server's refusal of its own listen addresses is
// missing, as there is none.
func NewFetchTransport(cfg config.Config) (*http.Transport, error) {
	tr, err := NewPolicyTransport(cfg)
	if err != nil {
		return nil, err
	}
	guardPolicyTransport(tr)
	return tr, nil
}
