package upstream

import (
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/transparent"
)

// alertAccessDenied is the TLS record of a fatal access_denied alert
// (RFC 8446 §6): how a client whose ClientHello a tunnel refused is told,
// in the protocol it speaks once the CONNECT was answered 200.
var alertAccessDenied = []byte{21, 3, 3, 0, 2, 2, 49}

// SendAccessDenied writes the TLS alert of a refused ClientHello to c.
func SendAccessDenied(c net.Conn) { _, _ = c.Write(alertAccessDenied) }

// HelloRefusal says why the first bytes inside a tunnel may not go
// through; the root maps each to its reason.
type HelloRefusal uint8

// The refusals of a tunnel's first bytes.
const (
	HelloOK         HelloRefusal = iota // a ClientHello for the target: spliced
	HelloNotTLS                         // not a TLS ClientHello (tunnel-not-tls)
	HelloServerName                     // a ClientHello for another server, or none (tunnel-server-name)
	HelloECH                            // a ClientHello that encrypts its server name (tunnel-ech)
)

// HelloCheck is what checking the first bytes inside a tunnel found: the
// bytes read (to send on, or to quote), and, when the tunnel is refused,
// why and what the refusal says.
type HelloCheck struct {
	First   []byte
	Refused HelloRefusal // HelloOK when the bytes may be spliced
	Detail  string
	TLS     bool // the bytes are a ClientHello: refused at the TLS level
}

// readTunnelHello reads the ClientHello client sends inside a tunnel to
// target (host:port as enforce keys it) and checks it ([examineHello]).
// The read is bounded by [transparent.ReadHello]'s size and by wait in
// all, however slowly the bytes arrive; then the connection may stay
// silent for idle (the spliced tunnel's bound, pushed back as bytes go
// through).
func readTunnelHello(client net.Conn, target string, wait, idle time.Duration) HelloCheck {
	deadline := time.Now().Add(wait)
	_ = client.SetReadDeadline(deadline)
	stop := time.AfterFunc(wait, func() { _ = client.SetReadDeadline(aLongTimeAgo) })
	hc := examineHello(&deadlineReader{r: client, deadline: deadline}, target)
	stop.Stop()
	_ = client.SetReadDeadline(time.Now().Add(idle))
	return hc
}

// examineHello reads a ClientHello from r ([transparent.ReadHello]) and
// checks it for a tunnel to target ([checkHello]).
func examineHello(r io.Reader, target string) HelloCheck {
	h, first, err := transparent.ReadHello(r)
	if err != nil {
		what := "do not begin a TLS ClientHello"
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			what += " (" + err.Error() + ")"
		}
		return HelloCheck{First: first, Refused: HelloNotTLS, Detail: what}
	}
	refused, detail := checkHello(h, target)
	return HelloCheck{First: first, Refused: refused, Detail: detail, TLS: true}
}

// checkHello says whether the ClientHello h may go through a tunnel
// decided for target: its server name must be target's host, compared as
// enforce spells hosts (case, trailing dot, IDNA); a hello without one
// goes through only to an IP literal, where the address is what was
// decided. An encrypted ClientHello (ECH) is refused whatever its outer
// name: the server serves the inner name, which robotsgate cannot read.
func checkHello(h transparent.Hello, target string) (HelloRefusal, string) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	want, err := enforce.CanonicalHost(host)
	if err != nil {
		return HelloServerName, "the CONNECT target " + strconv.Quote(target) + " has no canonical host"
	}
	ech := " (outer name " + strconv.Quote(h.ServerName) + ")"
	switch {
	case h.ECH:
		return HelloECH, "the ClientHello inside the tunnel to " + target + " encrypts the server name it is for (ECH)" + ech +
			"; the server serves the name inside, which tunnel mode cannot read or check, so the tunnel was closed (use https.mode mitm)"
	case h.ServerName == "" && isIPLiteral(want):
		return HelloOK, ""
	case h.ServerName == "":
		return HelloServerName, "the ClientHello inside the tunnel to " + target + " names no server (SNI): the server would pick a site of its own, " +
			"not necessarily the one decided, so the tunnel was closed"
	}
	got, err := enforce.CanonicalHost(h.ServerName)
	if err != nil || got != want {
		return HelloServerName, "the ClientHello inside the tunnel to " + target + " names the server " + strconv.Quote(h.ServerName) +
			", not the CONNECT target: only the host decided may be reached through the tunnel, so it was closed (CONNECT to that host instead)"
	}
	return HelloOK, ""
}

// isIPLiteral reports whether host, canonical, is an IP address.
func isIPLiteral(host string) bool {
	return net.ParseIP(host) != nil || (len(host) > 1 && host[0] == '[')
}

// deadlineReader reads from r until deadline, and fails after it even
// when reads keep returning bytes (a connection that pushes its own read
// deadline back whenever bytes arrive).
type deadlineReader struct {
	r        io.Reader
	deadline time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if time.Now().After(d.deadline) {
		return 0, os.ErrDeadlineExceeded
	}
	return d.r.Read(p)
}

// aLongTimeAgo is a read deadline that has passed: it makes a blocked
// Read return at once.
var aLongTimeAgo = time.Unix(1, 0)
