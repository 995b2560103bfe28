//go:build !linux

package transparent

import (
	"fmt"
	"net"
	"net/netip"
)

// OriginalDst is available on Linux only: elsewhere it returns an error
// wrapping [ErrNoOriginalDst].
func OriginalDst(c net.Conn) (netip.AddrPort, error) {
	return netip.AddrPort{}, fmt.Errorf("%w: original destinations are read on Linux only", ErrNoOriginalDst)
}
