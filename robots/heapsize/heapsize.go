// Package heapsize estimates what values take on the Go heap, for the
// caches that bound the memory of what they keep: the parsed robots.txt
// files ([github.com/robotsgate/robotsgate/robots.Robots.MemSize]), the
// RSL and TDMRep documents, and the enforcer's store of fetched entries.
// One estimator serves them all, so that their sums agree.
//
// An estimate counts an allocation as the allocator rounds it: small
// objects up to a multiple of 16 bytes, larger ones up to their size
// class, and those above the largest class up to a multiple of the 8 KiB
// page. It leaves out the allocator's own bookkeeping, so a large
// allocation is counted at least n + n/16, a margin for it.
package heapsize

import (
	"slices"
	"unsafe"
)

// Alloc returns what an allocation of n bytes takes; 0 for none.
func Alloc(n uintptr) int64 {
	// The size classes of the Go allocator above 128 bytes
	// (internal/runtime/gc/sizeclasses.go).
	classes := [...]uintptr{144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448,
		480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072,
		3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288,
		13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}
	switch {
	case n == 0:
		return 0
	case n <= 128:
		return int64((n + 15) &^ 15)
	case n <= classes[len(classes)-1]:
		i, _ := slices.BinarySearch(classes[:], n)
		return int64(max(classes[i], n+n/16))
	default:
		return int64(max((n+8191)&^8191, n+n/16))
	}
}

// Slice returns what the array of s takes: an allocation of its capacity.
func Slice[T any](s []T) int64 {
	var t T
	return Alloc(uintptr(cap(s)) * unsafe.Sizeof(t))
}

// String returns what the bytes of s take when s has an allocation of its
// own (not a substring of a larger string).
func String(s string) int64 { return Alloc(uintptr(len(s))) }

// Strings returns what the array of ss and the bytes of its strings take,
// each string counted as an allocation of its own.
func Strings(ss []string) int64 {
	n := Slice(ss)
	for _, s := range ss {
		n += String(s)
	}
	return n
}
