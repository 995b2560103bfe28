//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package upstream

import "net"

// CanHandOff says whether this platform can tell that a connection is
// quiet; here it cannot, and no connection is handed off.
const CanHandOff = false

// Quiet cannot tell on this platform: it says no.
func Quiet(net.Conn) bool { return false }
