//go:build unix

package testsupport

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// FillPipe writes to w (the write end of an [os.Pipe], non-blocking at the
// system level) until the pipe's buffer is full, so that the next write
// blocks.
func FillPipe(t testing.TB, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for _, size := range []int{4096, 1} {
			for buf := make([]byte, size); werr == nil; {
				if _, werr = syscall.Write(int(fd), buf); errors.Is(werr, syscall.EAGAIN) {
					werr = nil
					break
				}
			}
		}
		return true
	})
	if err != nil || werr != nil {
		t.Fatalf("filling the pipe: %v, %v", err, werr)
	}
}
