package testsupport

import (
	"runtime"
	"syscall"
	"testing"
)

// ThreadCPU returns the CPU time the calling thread has used, in ns.
func ThreadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)
}

// CPUPerOp runs loop with the goroutine locked to its thread and reports
// the thread's CPU time per iteration, which other processes on the
// machine do not inflate as they do wall time.
func CPUPerOp(b *testing.B, loop func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := ThreadCPU(b)
	n := 0
	for b.Loop() {
		loop()
		n++
	}
	b.ReportMetric(float64(ThreadCPU(b)-start)/float64(n), "cpu-ns/op")
}
