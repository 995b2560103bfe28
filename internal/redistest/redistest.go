// Package redistest starts a real, throw-away redis-server on a free
// loopback port for tests.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a redis-server child process listening on 127.0.0.1. It keeps
// no data on disk. It can be stopped and started again on the same port to
// test outages.
type Server struct {
	t    testing.TB
	bin  string
	port int
	// args returns the command line of the server (default: a plain
	// server on port, without persistence); dir is its working directory.
	args func(port int, dir string) []string
	dir  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// Start starts a redis-server on a free loopback port and registers its
// shutdown with t.Cleanup. It skips the test, with a message saying how to
// get the binary, when redis-server is not installed, and fails it instead
// when the environment sets ROBOTSGATE_REQUIRE_REDIS (as .ci/run does).
func Start(t testing.TB) *Server { return startServer(t, nil) }

// lookBin returns the path of redis-server, or skips (fails, with
// ROBOTSGATE_REQUIRE_REDIS) the test.
func lookBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath(serverBin())
	if err != nil {
		const msg = "redis-server not found in PATH: install it (Debian: apt-get install redis-server; .ci/run does) to run the Redis tests"
		if os.Getenv("ROBOTSGATE_REQUIRE_REDIS") != "" {
			t.Fatal(msg + " (ROBOTSGATE_REQUIRE_REDIS is set)")
		}
		t.Skip(msg)
	}
	return bin
}

// serverBin returns the server binary the tests run: redis-server, or
// the one ROBOTSGATE_REDIS_SERVER names (valkey-server, say; its client
// then comes from ROBOTSGATE_REDIS_CLI, default redis-cli).
func serverBin() string {
	if b := os.Getenv("ROBOTSGATE_REDIS_SERVER"); b != "" {
		return b
	}
	return "redis-server"
}

// cliBin returns the command-line client the cluster set-up runs.
func cliBin() string {
	if b := os.Getenv("ROBOTSGATE_REDIS_CLI"); b != "" {
		return b
	}
	return "redis-cli"
}

// startServer starts a redis-server with the command line args returns
// (nil: a plain server), on a free port.
func startServer(t testing.TB, args func(port int, dir string) []string) *Server {
	t.Helper()
	s := &Server{t: t, bin: lookBin(t), args: args, dir: t.TempDir()}
	var last error
	for range 5 { // another process may grab the free port between probe and start
		var err error
		s.port, err = freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		if last = s.start(); last == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redistest: %v", last)
	return nil
}

// Addr returns the server's "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns a redis:// URL of the server's database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr(), db) }

// Stop kills the server (SIGKILL, as a crash would) and waits for it to
// exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port, with an empty data
// set, after Stop. It fails the test if the port cannot be bound again.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

func (s *Server) startLocked() error {
	out := new(bytes.Buffer)
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "yes"}
	if s.args != nil {
		args = s.args(s.port, s.dir)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, err := serverPID(s.Addr()); err == nil {
			// Something answers on the port: make sure it is our child,
			// not another package's redis-server that won the port
			// while ours failed to bind.
			select {
			case <-done:
				return fmt.Errorf("redis-server on port %d exited at start (another server answers there):\n%s", s.port, out.String())
			default:
			}
			if pid != cmd.Process.Pid {
				_ = cmd.Process.Kill()
				<-done
				return fmt.Errorf("port %d is served by another redis-server (pid %d, ours was %d):\n%s", s.port, pid, cmd.Process.Pid, out.String())
			}
			break
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited at start:\n%s", s.port, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server on port %d did not answer PING within 10s:\n%s", s.port, out.String())
		}
	}
	s.cmd, s.out, s.done = cmd, out, done
	return nil
}

// serverPID sends an inline PING, expects +PONG, then asks INFO server
// and returns the process_id it reports.
func serverPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	rd := bufio.NewReader(c)
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return 0, err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "+PONG\r\n" {
		return 0, fmt.Errorf("unexpected PING reply %q", line)
	}
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, err
	}
	head, err := rd.ReadString('\n') // "$<len>\r\n"
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("unexpected INFO reply %q", head)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(rd, body); err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server reports no process_id")
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
