//go:build !linux

package testsupport

import "testing"

// CPUPerOp runs loop; only Linux reports CPU time per iteration.
func CPUPerOp(b *testing.B, loop func()) {
	for b.Loop() {
		loop()
	}
}
