package redistest

// Single servers of a kind other than a plain one, for tests of settings
// that cannot work: a lone sentinel, a lone cluster node, a TLS server.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// StartLoneSentinel starts one sentinel watching primary under the name
// master, and returns it (its Addr is the sentinel's). It skips like
// Start.
func StartLoneSentinel(t testing.TB, primary *Server, master string) *Server {
	t.Helper()
	return startServer(t, func(port int, dir string) []string {
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor %s 127.0.0.1 %d 1\n", port, master, primary.port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatalf("redistest: %v", err)
		}
		return []string{conf, "--sentinel"}
	})
}

// StartClusterNode starts one node with cluster mode on, in no cluster
// (it owns no slots). It skips like Start.
func StartClusterNode(t testing.TB) *Server {
	t.Helper()
	return startServer(t, func(port int, dir string) []string {
		bus, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(dir, "nodes.conf")}
	})
}

// TLSServer is a redis-server that also listens with TLS, on TLSAddr.
type TLSServer struct {
	*Server
	TLSAddr string
}

// StartTLS starts a redis-server that serves TLS on a second port with
// the certificate and key in the PEM files certFile and keyFile (clients
// send no certificate). It skips like Start.
func StartTLS(t testing.TB, certFile, keyFile string) *TLSServer {
	t.Helper()
	tlsPort, err := freePort()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	s := startServer(t, func(port int, _ string) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", certFile, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", certFile, "--tls-auth-clients", "no"}
	})
	return &TLSServer{Server: s, TLSAddr: "127.0.0.1:" + strconv.Itoa(tlsPort)}
}
