package proxy

import (
	"bufio"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// BenchmarkHTTPSMITMProxyCPU is [BenchmarkHTTPSMITM] (keep-alive and
// mixed) with the proxy in a process of its own, this test binary run as
// [TestHTTPSMITMBenchChild], and 16 clients at once, each with its own
// keep-alive connection, as the load script's mitmload: proxy-cpu-µs/op
// is the CPU the proxy's process alone used per request (its getrusage),
// as the load script measures it, and proxy-allocs/op and proxy-B/op its
// allocations; the client and the origin run in the benchmark's process
// (allocs/op and B/op are theirs).
//
//	go test ./proxy/ -run '^$' -bench HTTPSMITMProxyCPU -benchtime 3000x -count 3
//
// With ROBOTSGATE_MITM_BENCH_PROFILE set to a directory, each child
// writes its CPU profile there (kind-mode.cpu; the test binary is the
// one for go tool pprof).
func BenchmarkHTTPSMITMProxyCPU(b *testing.B) {
	origin := newTLSOrigin(b, "User-agent: *\nDisallow: /private\n")
	roots := writeCertPEM(b, origin.Certificate())
	for _, kind := range []string{"goproxy", "robotsgate"} {
		for _, mode := range []string{"keepalive", "mixed"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				child := startBenchChild(b, kind+"-"+mode, origin.port(b), roots)
				// 16 clients on 2 CPUs, each with its session open (CONNECT,
				// TLS) before the count starts.
				b.SetParallelism(8)
				clients := make(chan *http.Client, 8*runtime.GOMAXPROCS(0))
				for range cap(clients) {
					c := child.p.client(child.p.ca)
					defer c.Transport.(*http.Transport).CloseIdleConnections()
					benchGet(b, c, origin.URL+"/public/page", 200) // robots.txt, leaf certificate
					clients <- c
				}
				before := child.stats(b)
				var n atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					c := <-clients
					n.Add(int64(benchParallel(b, pb, c, origin.URL, mode == "mixed", kind == "robotsgate")))
				})
				after := child.stats(b)
				per := func(v int64) float64 { return float64(v) / float64(n.Load()) }
				b.ReportMetric(per(after[0]-before[0]), "proxy-cpu-µs/op")
				b.ReportMetric(per(after[1]-before[1]), "proxy-allocs/op")
				b.ReportMetric(per(after[2]-before[2]), "proxy-B/op")
			})
		}
	}
}

// benchParallel is benchLoop for one of b's parallel clients.
func benchParallel(b *testing.B, pb *testing.PB, c *http.Client, base string, mixed, refusing bool) int {
	return benchRequests(b, pb.Next, c, base, mixed, refusing)
}

// benchChild is a proxy running in a child process.
type benchChild struct {
	p   *httpsProxy
	ctl string // address of its CPU report
}

// stats returns the CPU the child process has used so far, in µs, the
// number of its allocations and their bytes.
func (c benchChild) stats(b *testing.B) [3]int64 {
	resp, err := http.Get("http://" + c.ctl + "/cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v [3]int64
	if _, err := fmt.Sscan(string(body), &v[0], &v[1], &v[2]); err != nil {
		b.Fatalf("child's stats: %q: %v", body, err)
	}
	return v
}

// childEnv names the proxy TestHTTPSMITMBenchChild runs, and its origin's
// port and roots: "kind port roots".
const childEnv = "ROBOTSGATE_MITM_BENCH_CHILD"

// startBenchChild runs name's proxy (goproxy-… or robotsgate-…) in a
// child process, for the origin on port whose certificate roots trusts,
// until b ends.
func startBenchChild(b *testing.B, name string, port int, roots string) benchChild {
	kind, _, _ := strings.Cut(name, "-")
	args := []string{"-test.run=^TestHTTPSMITMBenchChild$", "-test.count=1"}
	if dir := os.Getenv("ROBOTSGATE_MITM_BENCH_PROFILE"); dir != "" {
		args = append(args, "-test.cpuprofile="+filepath.Join(dir, name+".cpu"))
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"="+kind+" "+strconv.Itoa(port)+" "+roots)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close() // the child ends when its stdin does
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, out); cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(testTimeout):
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var proxyAddr, ctl, caFile string
		if _, err := fmt.Sscanf(sc.Text(), "READY %s %s %s", &proxyAddr, &ctl, &caFile); err != nil {
			continue
		}
		p := &httpsProxy{url: &url.URL{Scheme: "http", Host: proxyAddr}}
		if p.ca, err = loadRoots(caFile); err != nil {
			b.Fatal(err)
		}
		return benchChild{p: p, ctl: ctl}
	}
	b.Fatalf("the %s child never said READY", kind)
	return benchChild{}
}

// TestHTTPSMITMBenchChild is the child process of
// BenchmarkHTTPSMITMProxyCPU; it is skipped otherwise. It serves the
// proxy that childEnv names, says "READY proxy-address cpu-address
// ca-file" on stdout, and ends when its stdin does.
func TestHTTPSMITMBenchChild(t *testing.T) {
	spec := strings.Fields(os.Getenv(childEnv))
	if len(spec) != 3 {
		t.Skip("the child process of BenchmarkHTTPSMITMProxyCPU")
	}
	port, _ := strconv.Atoi(spec[1])
	cfg := testConfig(t)
	cfg.HTTPS.AllowedPorts = []int{port}
	cfg.HTTPS.UpstreamRoots = []string{spec[2]}
	ca, _, err := mitm.LoadOrCreateCA(cfg.HTTPS.DataDir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var p *httpsProxy
	if spec[0] == "robotsgate" {
		p = startHTTPSProxy(t, cfg) // the same data dir: the same CA
	} else {
		p = startBareMITM(t, cfg, ca)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Leaf.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctl := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "%d %d %d", processCPU().Microseconds(), ms.Mallocs, ms.TotalAlloc)
	})}
	go ctl.Serve(ln)
	defer ctl.Close()
	fmt.Printf("READY %s %s %s\n", p.url.Host, ln.Addr(), caFile)
	io.Copy(io.Discard, os.Stdin)
}

// loadRoots returns a pool of the certificates in the PEM file name.
func loadRoots(name string) (*x509.CertPool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("no certificate in %s", name)
	}
	return pool, nil
}
