package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// client is a command-line (or in-process) HTTP client without proxy
// settings; get returns the status, 0 when there was none.
type client struct {
	name string
	get  func(t *testing.T, url string) int
}

func clients(ca string) []client {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	return []client{
		{"curl", func(t *testing.T, u string) int {
			return statusOf(t, env, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "--cacert", ca, u)
		}},
		{"wget", func(t *testing.T, u string) int {
			out, _ := exec.Command("wget", "-S", "-O", "/dev/null", "--tries=1", "--timeout=20", "--ca-certificate="+ca, u).CombinedOutput()
			code := 0
			for _, l := range strings.Split(string(out), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") {
					code, _ = strconv.Atoi(f[1])
				}
			}
			return code
		}},
		{"python", func(t *testing.T, u string) int {
			return statusOf(t, env, "python3", "-c", `import ssl,sys,urllib.request,urllib.error
ctx = ssl.create_default_context(cafile=sys.argv[2])
try:
    print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=20).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print(0)`, u, ca)
		}},
		{"node", func(t *testing.T, u string) int {
			return statusOf(t, append(env, "NODE_EXTRA_CA_CERTS="+ca), "node", "-e",
				`fetch(process.argv[1], {signal: AbortSignal.timeout(20000)}).then(r => console.log(r.status), () => console.log(0))`, u)
		}},
		{"go", func(t *testing.T, u string) int { // http.Get, bounded
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}},
	}
}

// statusOf runs a client that prints the status.
func statusOf(t *testing.T, env []string, name string, args ...string) int {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, _ := cmd.Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// rawRequests writes reqs on one connection to addr and returns the
// status of each response.
func rawRequests(t *testing.T, addr string, reqs ...string) []int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	var codes []int
	for _, r := range reqs {
		io.WriteString(c, r)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	return codes
}

// hitCounter counts the requests the origins served, by host and path.
type hitCounter struct {
	mu sync.Mutex
	m  map[string]int
}

func (h *hitCounter) add(host, path string) {
	h.mu.Lock()
	h.m[host+" "+path]++
	h.mu.Unlock()
}

func (h *hitCounter) get(host, path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[host+" "+path]
}

// private is the number of requests for a /private/ path.
func (h *hitCounter) private() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, v := range h.m {
		if strings.Contains(k, " /private/") {
			n += v
		}
	}
	return n
}

func (h *hitCounter) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, v := range h.m {
		if !strings.HasSuffix(k, "/robots.txt") {
			n += v
		}
	}
	return n
}

// startOrigins serves the origins on port 80 (HTTP) and 443 (TLS, a
// certificate of the test's own CA) of 127.0.0.1, and of ::1 when the
// namespace has IPv6. closed.test's robots.txt disallows everything;
// the others' disallow /private/.
func (e *nsEnv) startOrigins() {
	t := e.t
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		e.hits.add(host, r.URL.Path)
		e.sig.check(r)
		if r.URL.Path == "/robots.txt" {
			if host == "closed.test" {
				io.WriteString(w, "User-agent: *\nDisallow: /\n")
				return
			}
			io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		io.WriteString(w, "hello from "+host+"\n")
	})
	cert, caPEM := originCert(t)
	e.origCA = filepath.Join(e.dir, "origin-ca.pem")
	os.WriteFile(e.origCA, caPEM, 0o644)
	addrs := []string{"127.0.0.1"}
	if e.v6 {
		addrs = append(addrs, "[::1]")
	}
	for _, a := range addrs {
		for _, tlsOn := range []bool{false, true} {
			port := "80"
			if tlsOn {
				port = "443"
			}
			ln, err := net.Listen("tcp", a+":"+port)
			if err != nil {
				t.Fatal(err)
			}
			if tlsOn {
				ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
			}
			srv := &http.Server{Handler: h, ErrorLog: discardLog()}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
		}
	}
}

// originCert returns a leaf for the origins' names, signed by a CA of
// its own, and that CA's certificate in PEM.
func originCert(t *testing.T) (tls.Certificate, []byte) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "origin test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "origin.test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		DNSNames: []string{"origin.test", "closed.test", "origin6.test"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// mkdirShared returns a new directory that uid 65532 can write in.
func mkdirShared(t *testing.T) string {
	d, err := os.MkdirTemp("", "robotsgate-netns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	os.Chmod(d, 0o777)
	os.Mkdir(filepath.Join(d, "data"), 0o700)
	os.Chown(filepath.Join(d, "data"), 65532, 65532)
	return d
}

// run runs a command and fails the test when it fails.
func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// discardLog is a server error log that drops everything (TLS
// handshakes the clients abort).
func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }
