//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package proxy

import "net"

// canHandOff says whether this platform can tell that a connection is
// quiet; here it cannot, and no connection is handed off.
const canHandOff = false

// connQuiet cannot tell on this platform: it says no.
func connQuiet(net.Conn) bool { return false }
