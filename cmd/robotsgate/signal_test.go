//go:build unix

package main

// Signals: the graceful stop that SIGINT and SIGTERM start, seen from
// outside, in a helper process that is this test binary.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// helperCommand runs this test binary as a helper process: only the test
// named test, which does its work when env (NAME=value) says so.
func helperCommand(test string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// TestSignalHelperProcess is the process TestSignalSecondInterruptKills
// signals; it does nothing in a normal test run.
func TestSignalHelperProcess(t *testing.T) {
	if os.Getenv("ROBOTSGATE_SIGNAL_HELPER") != "1" {
		t.Skip("helper process")
	}
	ctx, stop := signalContext()
	defer stop()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("draining") // a graceful stop that takes long
	<-time.After(testTimeout)
	os.Exit(3)
}

// TestSignalSecondInterruptKills: the first SIGINT starts the graceful
// stop; a second one, during it, kills the process (Go's default).
func TestSignalSecondInterruptKills(t *testing.T) {
	cmd := helperCommand("TestSignalHelperProcess", "ROBOTSGATE_SIGNAL_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(out)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("helper printed %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	expect("ready")
	cmd.Process.Signal(os.Interrupt)
	expect("draining")
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("helper: %v, want killed by SIGINT", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("helper ended with %v, want killed by SIGINT", err)
	}
}

// TestStalledAuditHelperProcess is the robotsgate that
// TestShutdownWithStalledAuditLogExits1 signals; it does nothing in a
// normal test run.
func TestStalledAuditHelperProcess(t *testing.T) {
	if os.Getenv("RG_TEST_STALLED_AUDIT") != "1" {
		t.Skip("helper process")
	}
	ctx, stop := signalContext()
	defer stop()
	args := []string{"-listen", "127.0.0.1:0", "-data-dir", os.Getenv("RG_TEST_DATA_DIR"), "-log-format", "json",
		"-audit-log", "-", "-shutdown-timeout", "100ms"}
	os.Exit(run(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// TestShutdownWithStalledAuditLogExits1: robotsgate's audit log is its
// stdout, a pipe whose reader stopped reading (full buffer). Three
// blocked requests wait for their audit records. SIGTERM ends the
// process within shutdown_timeout plus the grace, with exit code 1 and
// the three records (and the volume record of the last flush) reported
// lost on stderr.
func TestShutdownWithStalledAuditLogExits1(t *testing.T) {
	origin, _ := newTestOrigin(t, nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close() // never read
	testsupport.FillPipe(t, pw)
	cmd := helperCommand("TestStalledAuditHelperProcess", "RG_TEST_STALLED_AUDIT=1", "RG_TEST_DATA_DIR="+t.TempDir())
	cmd.Stdout = pw // passed as the child's fd 1, in blocking mode
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { cmd.Process.Kill() })
	stderr := &syncBuffer{}
	listening := make(chan string, 1)
	go func() {
		for sc := bufio.NewScanner(errPipe); sc.Scan(); {
			fmt.Fprintln(stderr, sc.Text())
			var line struct{ Message, Listen string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "robotsgate listening" {
				listening <- line.Listen
			}
		}
	}()
	exited := make(chan error, 1)
	var addr string
	select {
	case addr = <-listening:
	case <-time.After(testTimeout):
		t.Fatalf("robotsgate did not listen:\n%s", stderr)
	}
	go func() { exited <- cmd.Wait() }()

	const n = 3
	client := &http.Client{Timeout: 4 * testTimeout, Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}}
	for i := range n {
		go func() {
			if resp, err := client.Get(fmt.Sprintf("%s/private/%d", origin.URL, i)); err == nil {
				resp.Body.Close()
			}
		}()
	}
	// Wait (bounded) until robotsgate serves the three requests.
	testsupport.WaitFor(t, fmt.Sprintf("%d requests in flight", n), func() bool {
		return testsupport.MetricValue(t, getMetrics(addr), "robotsgate_inflight_requests") == float64(n)
	})
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err = <-exited:
	case <-time.After(6 * testTimeout):
		t.Fatalf("robotsgate did not exit after SIGTERM with its audit log stalled:\n%s", stderr)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want exit code 1:\n%s", err, stderr)
	}
	lost := n + 1 // and the volume record of the refusals, flushed at the stop
	if !strings.Contains(stderr.String(), fmt.Sprintf(`"failed":%d,"lost":%d`, lost, lost)) ||
		!strings.Contains(stderr.String(), fmt.Sprintf("%d record(s) under way not written (the one blocked in its write: blocked GET %s/private/", lost, origin.URL)) {
		t.Fatalf("stderr does not report the %d lost records:\n%s", lost, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
}

// getMetrics returns robotsgate's /metrics page ("" on an error).
func getMetrics(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
