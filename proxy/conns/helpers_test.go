package conns

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// testTimeout bounds every wait of these tests.
const testTimeout = 10 * time.Second

// rawConnect sends CONNECT target to the server at addr and returns the
// response (its body unread), the connection (closed when the test ends)
// and its reader.
func rawConnect(t testing.TB, addr, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * testTimeout))
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp, c, br
}
