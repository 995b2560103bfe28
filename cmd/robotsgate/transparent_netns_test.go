package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
