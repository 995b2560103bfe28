package transparent

import (
	"context"
	"net"
	"net/netip"
	"sync"
)

// DialFunc is the signature of http.Transport.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Outbound records the local addresses of robotsgate's own open outbound
// connections, so that the transparent listener recognises one of them
// arriving back (a redirect loop: the rules do not exclude robotsgate's
// uid). A connection's address is recorded before the dialer returns it,
// so before its first byte is sent: a looped connection is recognised
// once its first bytes arrive (Sniff). It is safe for concurrent use.
type Outbound struct {
	m sync.Map // netip.AddrPort → struct{}
}

// Dialer wraps next so that the connections it opens are recorded until
// they are closed.
func (o *Outbound) Dialer(next DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		local, perr := netip.ParseAddrPort(c.LocalAddr().String())
		if perr != nil {
			return c, nil
		}
		local = unmap(local)
		o.m.Store(local, struct{}{})
		oc := &outConn{Conn: c, o: o, local: local}
		if _, ok := c.(halfCloser); ok {
			return &outHalfCloser{oc}, nil
		}
		return oc, nil
	}
}

// Has reports whether addr (a connection's remote address, as the
// listener sees it) is the local address of one of robotsgate's own
// open outbound connections.
func (o *Outbound) Has(addr netip.AddrPort) bool {
	_, ok := o.m.Load(unmap(addr))
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
	o     *Outbound
	local netip.AddrPort
	once  sync.Once
}

func (c *outConn) Close() error {
	c.once.Do(func() { c.o.m.Delete(c.local) })
	return c.Conn.Close()
}

// outHalfCloser keeps a TCP connection's half-close methods visible (a
// CONNECT tunnel closes each direction on its own).
type outHalfCloser struct{ *outConn }

func (c *outHalfCloser) CloseRead() error  { return c.Conn.(halfCloser).CloseRead() }
func (c *outHalfCloser) CloseWrite() error { return c.Conn.(halfCloser).CloseWrite() }
