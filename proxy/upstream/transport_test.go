package upstream

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestPolicyConnRefusesEarlyBytes: on a policy-file connection, bytes
// that arrive before anything was written are an error, never an answer;
// after the request was written, the answer reads normally.
func TestPolicyConnRefusesEarlyBytes(t *testing.T) {
	early, peer := net.Pipe()
	defer peer.Close()
	c := &writeFirstConn{Conn: early}
	go io.WriteString(peer, "HTTP/1.1 404 Not Found\r\n\r\n")
	if n, err := c.Read(make([]byte, 64)); n != 0 || !errors.Is(err, errEarlyResponse) {
		t.Fatalf("read before the request: %d, %v; want errEarlyResponse", n, err)
	}

	client, server := net.Pipe()
	defer server.Close()
	c = &writeFirstConn{Conn: client}
	go func() {
		br := bufio.NewReader(server)
		if _, err := http.ReadRequest(br); err == nil {
			io.WriteString(server, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	}()
	if _, err := io.WriteString(c, "GET /robots.txt HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("answer after the request: %v %v", resp, err)
	}
	c.Close()
}
