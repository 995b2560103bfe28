package heapsize

import (
	"runtime"
	"testing"
)

func TestAlloc(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    uintptr
		want int64
	}{
		{"none", 0, 0},
		{"one byte", 1, 16},
		{"small", 128, 128},
		{"first class", 129, 144},
		{"class rounding", 1080, 1152},
		{"margin over class", 1000, 1062},
		{"largest class", 32768, 34816},
		{"pages", 40000, 42500},
		{"page rounding", 8192*5 + 1, 49152},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Alloc(tt.n); got != tt.want {
				t.Errorf("Alloc(%d) = %d, want %d", tt.n, got, tt.want)
			}
		})
	}
}

// TestAllocCoversHeap checks that Alloc never falls short of what the
// runtime takes for byte slices of assorted sizes. Other allocations can
// only add to a measure, so the least of a few is kept.
func TestAllocCoversHeap(t *testing.T) {
	for _, n := range []int{1, 17, 129, 1000, 5000, 33000, 100000} {
		per := int64(-1)
		for range 5 {
			if m := allocated(n); per < 0 || m < per {
				per = m
			}
		}
		if est := Alloc(uintptr(n)); est < per {
			t.Errorf("Alloc(%d) = %d, the runtime took %d", n, est, per)
		}
	}
}

// allocated returns the bytes the runtime takes per slice of n bytes.
func allocated(n int) int64 {
	keep := make([][]byte, 64)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range keep {
		keep[i] = make([]byte, n)
	}
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(keep)
	return int64(m1.TotalAlloc-m0.TotalAlloc) / int64(len(keep))
}

func TestSliceAndStrings(t *testing.T) {
	if got := Slice(make([]int64, 3, 5)); got != 48 {
		t.Errorf("Slice of cap 5 int64 = %d, want 48", got)
	}
	if got := Strings([]string{"a", "bc"}); got != 32+16+16 {
		t.Errorf("Strings = %d, want 64", got)
	}
}
