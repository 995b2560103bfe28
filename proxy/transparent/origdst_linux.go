package transparent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// ip6tSOOriginalDst is IP6T_SO_ORIGINAL_DST (linux/netfilter_ipv6/ip6_tables.h),
// which golang.org/x/sys/unix does not name; it has the value of
// SO_ORIGINAL_DST, at the IPv6 level.
const ip6tSOOriginalDst = 80

// OriginalDst returns the destination c was addressed to before the
// kernel redirected it (iptables/nftables REDIRECT), read from the
// connection tracking entry: SO_ORIGINAL_DST for IPv4 (also on a
// dual-stack socket carrying IPv4), IP6T_SO_ORIGINAL_DST for IPv6. A
// connection that was not redirected has its own local address as its
// original destination, or, with no connection tracking at all, an
// error wrapping [ErrNoOriginalDst].
func OriginalDst(c net.Conn) (netip.AddrPort, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%w: %T is not a socket", ErrNoOriginalDst, c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", err)
	}
	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	var dst netip.AddrPort
	var serr error
	cerr := raw.Control(func(fd uintptr) {
		if local.Addr().Unmap().Is4() {
			dst, serr = origDst4(int(fd))
		} else {
			dst, serr = origDst6(int(fd))
		}
	})
	if cerr != nil {
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", cerr)
	}
	if serr != nil {
		if errors.Is(serr, unix.ENOENT) || errors.Is(serr, unix.ENOPROTOOPT) {
			return netip.AddrPort{}, fmt.Errorf("%w: %w", ErrNoOriginalDst, serr)
		}
		return netip.AddrPort{}, fmt.Errorf("original destination: %w", serr)
	}
	return dst, nil
}

// origDst4 reads a struct sockaddr_in: the 16 bytes of an IPv6Mreq.
func origDst4(fd int) (netip.AddrPort, error) {
	m, err := unix.GetsockoptIPv6Mreq(fd, unix.SOL_IP, unix.SO_ORIGINAL_DST)
	if err != nil {
		return netip.AddrPort{}, err
	}
	b := m.Multiaddr // family (2 bytes, host order), port (network order), address
	port := binary.BigEndian.Uint16(b[2:4])
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), port), nil
}

// origDst6 reads a struct sockaddr_in6 into the larger IPv6MTUInfo.
func origDst6(fd int) (netip.AddrPort, error) {
	m, err := unix.GetsockoptIPv6MTUInfo(fd, unix.SOL_IPV6, ip6tSOOriginalDst)
	if err != nil {
		return netip.AddrPort{}, err
	}
	sa := m.Addr
	var b [2]byte // the port as it lies in memory: network order
	binary.NativeEndian.PutUint16(b[:], sa.Port)
	port := binary.BigEndian.Uint16(b[:])
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port), nil
}
