//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

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
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalHelperProcess$")
	cmd.Env = append(os.Environ(), "ROBOTSGATE_SIGNAL_HELPER=1")
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
