package transparent

import (
	"crypto/tls"
	"io"
	"net"
	"slices"
	"time"
)

// extensionECH is the TLS extension of an encrypted ClientHello
// (encrypted_client_hello, draft-ietf-tls-esni).
const extensionECH = 0xfe0d

// Hello is what a TLS ClientHello says that robotsgate checks.
type Hello struct {
	// ServerName is the server_name (SNI) as sent, "" when there is none.
	ServerName string
	// ECH says that the hello carries an encrypted ClientHello: the server
	// that can decrypt it serves the name inside, and ServerName is only
	// the outer, public one. A GREASE extension, which clients send where
	// they have no key, cannot be told apart from a real one.
	ECH bool
}

// ReadHello reads one whole TLS ClientHello from r, parsed by crypto/tls
// itself (its server side, which stops once the hello is read): a
// handshake message split over several records and several reads is put
// together, and anything that is not a well-formed ClientHello is an
// error, as are a reader that failed or ended early and [maxHello] bytes
// without a whole hello. It returns every byte it read, to be sent on.
// Time is the caller's to bound (a read deadline).
func ReadHello(r io.Reader) (Hello, []byte, error) {
	rec := &recorder{Conn: readerConn{r}}
	h, err := readHello(rec)
	return h, rec.buf, err
}

// readHello parses the ClientHello conn begins with: crypto/tls reads it
// and hands it to GetConfigForClient, which stops the handshake. Nothing
// is written to a real client: conn drops writes.
func readHello(conn net.Conn) (Hello, error) {
	var h Hello
	seen := false
	srv := tls.Server(conn, &tls.Config{GetConfigForClient: func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		h = Hello{ServerName: chi.ServerName, ECH: slices.Contains(chi.Extensions, extensionECH)}
		seen = true
		return nil, errHelloRead
	}})
	err := srv.Handshake()
	if seen {
		return h, nil
	}
	return Hello{}, err
}

// readerConn is an [io.Reader] as the [net.Conn] crypto/tls reads a
// ClientHello from; the handshake calls nothing but Read and Write.
type readerConn struct{ r io.Reader }

func (c readerConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c readerConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c readerConn) Close() error                     { return nil }
func (c readerConn) LocalAddr() net.Addr              { return noAddr{} }
func (c readerConn) RemoteAddr() net.Addr             { return noAddr{} }
func (c readerConn) SetDeadline(time.Time) error      { return nil }
func (c readerConn) SetReadDeadline(time.Time) error  { return nil }
func (c readerConn) SetWriteDeadline(time.Time) error { return nil }

// noAddr is the address of a [readerConn].
type noAddr struct{}

func (noAddr) Network() string { return "none" }
func (noAddr) String() string  { return "none" }
