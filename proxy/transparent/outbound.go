package transparent

import (
	"context"
	"net"
	"net/netip"
	"sync"
)

// DialFunc is the signature of [http.Transport.DialContext].
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Outbound records the addresses (local and remote) of robotsgate's own
// open outbound connections, so that the transparent listener recognises
// one of them arriving back (a redirect loop: the rules do not exclude
// robotsgate's uid): its client address is the connection's local address,
// and its original destination the connection's remote address. Both are
// needed: the kernel gives the same local port to connections to
// different destinations. A connection is recorded before the dialer
// returns it, so before its first byte is sent: a looped connection is
// recognised once its first bytes arrive (Sniff). It is safe for
// concurrent use.
type Outbound struct {
	m sync.Map // ends → struct{}
}

// ends are the two addresses of a connection.
type ends struct{ local, remote netip.AddrPort }

// Dialer wraps next so that the connections it opens are recorded until
// they are closed.
func (o *Outbound) Dialer(next DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		local, lerr := netip.ParseAddrPort(c.LocalAddr().String())
		remote, rerr := netip.ParseAddrPort(c.RemoteAddr().String())
		if lerr != nil || rerr != nil {
			return c, nil
		}
		e := ends{unmap(local), unmap(remote)}
		o.m.Store(e, struct{}{})
		oc := &outConn{Conn: c, o: o, ends: e}
		if _, ok := c.(halfCloser); ok {
			return &outHalfCloser{oc}, nil
		}
		return oc, nil
	}
}

// Has reports whether a redirected connection from client to the
// original destination dst is one of robotsgate's own open outbound
// connections.
func (o *Outbound) Has(client, dst netip.AddrPort) bool {
	_, ok := o.m.Load(ends{unmap(client), unmap(dst)})
	return ok
}

// unmap turns an IPv4-mapped IPv6 address into IPv4 and drops a zone.
func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap().WithZone(""), a.Port())
}

type halfCloser interface {
	CloseRead() error
	CloseWrite() error
}

// outConn is a recorded outbound connection; Close forgets it.
type outConn struct {
	net.Conn
	o    *Outbound
	ends ends
	once sync.Once
}

// NetConn returns the connection recorded.
func (c *outConn) NetConn() net.Conn { return c.Conn }

func (c *outConn) Close() error {
	c.once.Do(func() { c.o.m.Delete(c.ends) })
	return c.Conn.Close()
}

// outHalfCloser keeps a TCP connection's half-close methods visible (a
// CONNECT tunnel closes each direction on its own).
type outHalfCloser struct{ *outConn }

func (c *outHalfCloser) CloseRead() error  { return c.Conn.(halfCloser).CloseRead() }
func (c *outHalfCloser) CloseWrite() error { return c.Conn.(halfCloser).CloseWrite() }
