package transparent

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// The writers of a redirected connection's answers: robotsgate's own
// answer written to a request's ResponseWriter, and the ResponseWriter of
// a CONNECT made up for a redirected TLS connection.

// WriteResponse writes robotsgate's own answer resp to w.
func WriteResponse(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	resp.Body.Close()
}

// HijackWriter is the ResponseWriter of a CONNECT made up for the
// redirected TLS connection conn, which goproxy hijacks at once.
func HijackWriter(conn net.Conn) http.ResponseWriter { return &hijackWriter{conn: conn} }

// hijackWriter is the ResponseWriter of a CONNECT made up for a
// redirected TLS connection: goproxy hijacks the connection at once.
type hijackWriter struct {
	conn   net.Conn
	header http.Header
}

func (w *hijackWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}
func (w *hijackWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *hijackWriter) WriteHeader(int)             {}

// Hijack returns the connection.
func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.conn, bufio.NewReadWriter(bufio.NewReader(w.conn), bufio.NewWriter(w.conn)), nil
}
