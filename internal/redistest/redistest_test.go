package redistest

import (
	"strings"
	"testing"
)

// TestStartRefusesAnotherServersPort: a second server started on a port
// that a first one holds fails to bind; the start must report it instead
// of latching onto the first server, which answers PING too.
func TestStartRefusesAnotherServersPort(t *testing.T) {
	first := Start(t)
	second := &Server{t: t, bin: first.bin, port: first.port}
	err := second.start()
	if err == nil {
		second.Stop()
		t.Fatal("second server on a taken port started: it latched onto the first one")
	}
	if !strings.Contains(err.Error(), "exited at start") && !strings.Contains(err.Error(), "another redis-server") {
		t.Fatalf("error %v; want a start failure", err)
	}
	// The first server is untouched.
	if _, err := serverPID(first.Addr()); err != nil {
		t.Fatalf("first server: %v", err)
	}
}

// TestSentinelAndClusterStart: a Sentinel set names its primary, and a
// Cluster has three primaries, all answering.
func TestSentinelAndClusterStart(t *testing.T) {
	t.Parallel()
	s := StartSentinel(t)
	if got := s.PrimaryAddr(); got != s.Primary.Addr() {
		t.Fatalf("sentinels give primary %q, want %q", got, s.Primary.Addr())
	}
	c := StartCluster(t)
	if n := len(c.Primaries()); n != 3 {
		t.Fatalf("%d primaries, want 3", n)
	}
}
