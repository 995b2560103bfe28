package main

import (
	"bufio"
	"bytes"
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
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The transparent sidecar, end to end: a network namespace made by the
// test (the test binary re-executed under `unshare --net --mount`),
// origins on loopback port 80 and 443 in it, the robotsgate binary built
// by the test running as uid 65532, the rules of `robotsgate iptables
// -apply`, and clients with no proxy settings at all.

const netnsChildEnv = "ROBOTSGATE_NETNS_CHILD"

// requireNetns skips (or, with ROBOTSGATE_REQUIRE_NETNS set, as .ci/run
// does, fails) unless the test can make a network namespace and apply
// iptables rules in it.
func requireNetns(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "not root"
	default:
		for _, bin := range []string{"unshare", "ip", "iptables-restore", "ip6tables-restore", "curl", "wget", "python3", "node"} {
			if _, err := exec.LookPath(bin); err != nil {
				why = bin + " not installed"
				break
			}
		}
	}
	if why == "" {
		if out, err := exec.Command("unshare", "--net", "--mount", "true").CombinedOutput(); err != nil {
			why = "unshare --net --mount fails: " + strings.TrimSpace(string(out))
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("ROBOTSGATE_REQUIRE_NETNS") != "" {
		t.Fatalf("transparent sidecar test cannot run: %s (ROBOTSGATE_REQUIRE_NETNS is set)", why)
	}
	t.Skipf("transparent sidecar test needs root, unshare, iptables and the clients: %s", why)
}

func TestTransparentSidecar(t *testing.T) {
	if os.Getenv(netnsChildEnv) != "" {
		transparentChild(t)
		return
	}
	requireNetns(t)
	bin := filepath.Join(mkdirShared(t), "robotsgate") // uid 65532 runs it
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--mount", "--propagation", "private",
		os.Args[0], "-test.run", "^TestTransparentSidecar$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), netnsChildEnv+"=1", "ROBOTSGATE_TEST_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestTransparentSidecar")) {
		t.Fatalf("in the network namespace: %v\n%s", err, out)
	}
}

// nsEnv is one run inside the namespace.
type nsEnv struct {
	t      *testing.T
	bin    string
	dir    string
	caFile string // robotsgate's CA (MITM), trusted by the clients
	origCA string // the origins' CA (tunnel mode, upstream roots)
	hits   *hitCounter
	v6     bool
	proc   *exec.Cmd
	stderr *syncBuffer
	sig    *sigCheck // Web Bot Auth signatures (transparent_signing_test.go)
}

func transparentChild(t *testing.T) {
	e := &nsEnv{t: t, bin: os.Getenv("ROBOTSGATE_TEST_BIN"), hits: &hitCounter{m: map[string]int{}}}
	mustRun(t, "ip", "link", "set", "lo", "up")
	e.dir = mkdirShared(t)
	_, err := os.Stat("/proc/net/if_inet6")
	e.v6 = err == nil
	hosts := filepath.Join(e.dir, "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 localhost origin.test closed.test\n127.0.0.2 other.test\n::1 ip6-localhost origin6.test\n"), 0o644)
	if err := unix.Mount(hosts, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mount /etc/hosts: %v", err)
	}
	e.sig = newSigCheck(t, e.dir, 65532)
	e.startOrigins()

	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		os.Unsetenv(k) // Go's default client: no proxy settings at all
	}
	e.start("mitm")
	// Go's default client trusts the system roots: robotsgate's CA (MITM)
	// and the origins' (tunnel mode), read once from SSL_CERT_FILE.
	rgCA, _ := os.ReadFile(e.caFile)
	origCA, _ := os.ReadFile(e.origCA)
	bundle := filepath.Join(e.dir, "roots.pem")
	os.WriteFile(bundle, append(rgCA, origCA...), 0o644)
	os.Setenv("SSL_CERT_FILE", bundle)
	mustRun(t, e.bin, "iptables", "-apply")
	t.Run("clients", e.testClients)
	t.Run("raw", e.testRaw)
	t.Run("loop", e.testLoop)
	e.stop()

	e.start("tunnel")
	t.Run("tunnel", e.testTunnel)
	e.stop()
	mustRun(t, e.bin, "iptables", "-remove")
}

// testClients: each client, with no proxy settings, gets 200 for an
// allowed URL and 403 for a disallowed one, over HTTP and HTTPS; the
// origin never sees the disallowed ones.
func (e *nsEnv) testClients(t *testing.T) {
	hosts := []string{"origin.test"}
	if e.v6 {
		hosts = append(hosts, "origin6.test")
	}
	for _, c := range clients(e.caFile) {
		for _, host := range hosts {
			for _, scheme := range []string{"http", "https"} {
				base := scheme + "://" + host
				if got := c.get(t, base+"/allowed/"+c.name); got != 200 {
					t.Errorf("%s %s/allowed: %d, want 200", c.name, base, got)
				}
				if got := c.get(t, base+"/private/"+c.name); got != 403 {
					t.Errorf("%s %s/private: %d, want 403", c.name, base, got)
				}
			}
		}
	}
	if n := e.hits.private(); n != 0 {
		t.Errorf("the origins saw %d requests for /private/", n)
	}
	e.wantAudit(t, `"reason":"disallowed"`, `"listener":"transparent"`)
	e.sig.want(t)
}

// testRaw: a Host that is not the original destination (409, the origin
// sees nothing), keep-alive whose second request is disallowed, bytes
// that are not HTTP, and a connection that was not redirected.
func (e *nsEnv) testRaw(t *testing.T) {
	before := e.hits.total()
	for _, host := range []string{"other.test", "nowhere.invalid", "127.0.0.2"} {
		resp := rawRequests(t, "127.0.0.1:80", "GET /allowed/raw HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		if len(resp) != 1 || resp[0] != 409 {
			t.Errorf("Host %s on a connection to 127.0.0.1:80: %v, want [409]", host, resp)
		}
	}
	if n := e.hits.total(); n != before {
		t.Errorf("the origin saw %d requests with a mismatched Host", n-before)
	}
	resp := rawRequests(t, "127.0.0.1:80", "GET /allowed/ka HTTP/1.1\r\nHost: origin.test\r\n\r\n",
		"GET /private/ka HTTP/1.1\r\nHost: origin.test\r\n\r\n")
	if len(resp) != 2 || resp[0] != 200 || resp[1] != 403 {
		t.Errorf("keep-alive: %v, want [200 403]", resp)
	}
	// every request on the connection is checked, not only the first
	resp = rawRequests(t, "127.0.0.1:80", "GET /allowed/ka2 HTTP/1.1\r\nHost: origin.test\r\n\r\n",
		"GET /allowed/ka2 HTTP/1.1\r\nHost: other.test\r\n\r\n")
	if len(resp) != 2 || resp[0] != 200 || resp[1] != 409 {
		t.Errorf("keep-alive, second Host elsewhere: %v, want [200 409]", resp)
	}
	if n := e.hits.get("other.test", "/allowed/ka2"); n != 0 {
		t.Errorf("other.test saw %d requests", n)
	}
	// TLS: no server name, or one that is not the original destination:
	// the connection is closed, never spliced.
	for name, reason := range map[string]string{"": "no-sni", "other.test": "destination-mismatch"} {
		c, err := net.DialTimeout("tcp", "127.0.0.1:443", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		tc := tls.Client(c, &tls.Config{ServerName: name, InsecureSkipVerify: true})
		if err := tc.Handshake(); err == nil {
			t.Errorf("TLS with server name %q: handshake succeeded", name)
		}
		c.Close()
		e.wantAudit(t, `"reason":"`+reason+`"`)
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:80", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n")
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Errorf("SSH bytes: read %q, %v; want the connection closed", b, err)
	}
	c.Close()
	e.wantAudit(t, `"reason":"unknown-protocol"`, `"listener":"transparent"`)
	e.wantAudit(t, `"reason":"destination-mismatch"`, `"listener":"transparent"`)
	if resp := rawRequests(t, "127.0.0.1:15001", "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n"); len(resp) != 1 || resp[0] != 403 {
		t.Errorf("not redirected: %v, want [403]", resp)
	}
	e.wantAudit(t, `"reason":"not-redirected"`, `"listener":"transparent"`)
	if n := e.hits.private(); n != 0 {
		t.Errorf("the origins saw %d requests for /private/", n)
	}
}

// testLoop: rules that do not exclude robotsgate's uid make its own
// connections come back to it: answered at once, never forwarded, and
// the operator log names the fix.
func (e *nsEnv) testLoop(t *testing.T) {
	mustRun(t, e.bin, "iptables", "-apply", "-uid", "4242")
	defer mustRun(t, e.bin, "iptables", "-apply")
	before := e.hits.total()
	got := clients(e.caFile)[0].get(t, "http://closed.test/loop") // curl, bounded by --max-time
	if got == 200 || got == 0 {
		t.Errorf("with a redirect loop: %d, want robotsgate's refusal", got)
	}
	if n := e.hits.total(); n != before {
		t.Errorf("the origin saw %d requests during the loop", n-before)
	}
	if !strings.Contains(e.stderr.String(), "exclude uid 65532 from the redirect") {
		t.Errorf("operator log does not name the fix:\n%s", e.stderr.String())
	}
	e.wantAudit(t, `"reason":"redirect-loop"`)
}

// testTunnel: in tunnel mode the host is decided: a site closed to the
// agent is refused (the TLS connection closed), an open one tunnelled.
func (e *nsEnv) testTunnel(t *testing.T) {
	mustRun(t, e.bin, "iptables", "-apply")
	for _, c := range clients(e.origCA) {
		if got := c.get(t, "https://origin.test/private/tunnel-"+c.name); got != 200 {
			t.Errorf("%s: tunnel to an open site: %d, want 200 (paths are not checked)", c.name, got)
		}
		if got := c.get(t, "https://closed.test/x"); got != 0 {
			t.Errorf("%s: tunnel to a closed site: %d, want the connection refused", c.name, got)
		}
	}
	e.wantAudit(t, `"reason":"site-disallowed"`)
	e.sig.want(t)
	if n := e.hits.get("closed.test", "/x"); n != 0 {
		t.Errorf("closed.test saw %d requests", n)
	}
}

// start runs robotsgate as uid 65532 with https.mode mode and waits
// until it answers.
func (e *nsEnv) start(mode string) {
	t := e.t
	e.stderr = &syncBuffer{}
	e.proc = exec.Command(e.bin, "serve", "-listen", "127.0.0.1:9309", "-transparent-listen", "[::]:15001",
		"-https", mode, "-audit", "all", "-audit-log", filepath.Join(e.dir, "audit-"+mode+".jsonl"),
		"-data-dir", filepath.Join(e.dir, "data"), "-upstream-roots", e.origCA, "-log-format", "json", "-agent", "TestBot")
	e.proc.Args = append(e.proc.Args, e.sig.flags()...)
	e.proc.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir}
	e.proc.Stderr = e.stderr
	e.proc.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	if err := e.proc.Start(); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil}}
	for i := 0; ; i++ {
		resp, err := c.Get("http://127.0.0.1:9309/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			t.Fatalf("robotsgate did not start: %v\n%s", err, e.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.caFile = filepath.Join(e.dir, "data", "robotsgate-ca-cert.pem")
}

func (e *nsEnv) stop() {
	e.proc.Process.Signal(syscall.SIGTERM)
	e.proc.Wait()
	if e.t.Failed() {
		files, _ := filepath.Glob(filepath.Join(e.dir, "audit-*.jsonl"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			e.t.Logf("%s:\n%s", f, b)
		}
		e.t.Logf("robotsgate's log:\n%s", e.stderr.String())
	}
}

// wantAudit fails unless an audit file holds a record containing all of
// parts.
func (e *nsEnv) wantAudit(t *testing.T, parts ...string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.dir, "audit-*.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range bytes.Split(b, []byte("\n")) {
			all := true
			for _, p := range parts {
				all = all && bytes.Contains(line, []byte(p))
			}
			if all {
				return
			}
		}
	}
	t.Errorf("no audit record with %s", strings.Join(parts, " and "))
}

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
