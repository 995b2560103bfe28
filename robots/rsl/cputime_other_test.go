//go:build !linux

package rsl

import "testing"

// cpuPerOp runs loop; only Linux reports CPU time per iteration.
func cpuPerOp(b *testing.B, loop func()) {
	for b.Loop() {
		loop()
	}
}
