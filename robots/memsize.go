package robots

import (
	"slices"
	"unsafe"
)

// MemSize returns an estimate of the heap memory r holds, in bytes: its
// rules, compiled patterns, indexes and automaton, with the rounding of
// the allocator. It is computed once, when r is parsed, and is meant for
// caches that bound the memory of the files they keep.
func (r *Robots) MemSize() int64 {
	if r == nil {
		return 0
	}
	return r.size
}

// Body returns the text r was parsed from: the body, cut at the limit.
// It shares r's memory (a cache need not keep a copy of the body beside
// r) and must not be modified.
func (r *Robots) Body() []byte {
	if r == nil {
		return nil
	}
	return bytesOf(r.text)
}

// alloc returns what an allocation of n bytes takes: the allocator
// rounds small objects up to a multiple of 16 bytes, larger ones up to
// its next size class ([sizeClasses]), and those above the largest class
// up to a multiple of its 8 KiB pages. A large one is counted at least
// n + n/16, a margin for what the estimate leaves out.
func alloc(n uintptr) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 128:
		return int64((n + 15) &^ 15)
	case n <= sizeClasses[len(sizeClasses)-1]:
		i, _ := slices.BinarySearch(sizeClasses[:], n)
		return int64(max(sizeClasses[i], n+n/16))
	default:
		return int64(max((n+8191)&^8191, n+n/16))
	}
}

// sizeClasses are the size classes of the Go allocator above 128 bytes
// (internal/runtime/gc/sizeclasses.go).
var sizeClasses = [...]uintptr{144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448,
	480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072,
	3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288,
	13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocSlice returns what the array of a slice of cap c of T takes.
func allocSlice[T any](s []T) int64 {
	var t T
	return alloc(uintptr(cap(s)) * unsafe.Sizeof(t))
}

// allocStrings returns what the strings of ss and their array take.
func allocStrings(ss []string) int64 {
	n := allocSlice(ss)
	for _, s := range ss {
		n += alloc(uintptr(len(s)))
	}
	return n
}

// memSize computes the estimate MemSize returns; sets are the file's
// usage sets.
func (r *Robots) memSize(sets []*usageSet) int64 {
	// The strings of rules, agents, sitemaps and extensions share r.text;
	// the parts are in r.written, their records in r.crs.
	n := alloc(unsafe.Sizeof(*r)) + alloc(uintptr(len(r.text))) + allocSlice(r.crs) + r.cx.memSize() + allocSlice(r.written) +
		allocSlice(r.agents) + allocSlice(r.groups) + allocSlice(r.gparts) + allocSlice(r.byAgent) +
		allocSlice(r.sitemaps) + allocSlice(r.extensions) + allocSlice(r.lines) + allocSlice(r.licenses)
	for i := range r.written {
		n += r.written[i].part.memSize()
	}
	for _, s := range sets {
		n += s.memSize()
	}
	n += r.usage.memSize()
	for i := range r.groups {
		n += r.groups[i].usage.memSize()
	}
	if r.idx != nil {
		n += alloc(unsafe.Sizeof(*r.idx)) + r.idx.segs.memSize()
	}
	return n
}

// memSize returns what pt holds besides itself and its records, which
// are in its file's arrays.
func (pt *part) memSize() int64 {
	if pt.partX == nil {
		return 0
	}
	n := alloc(unsafe.Sizeof(*pt.partX))
	n += pt.tab.memSize()
	if pt.keys != nil {
		n += alloc(unsafe.Sizeof(*pt.keys)) + allocSlice(pt.keys.kfrom)
	}
	if ix := pt.cix; ix != nil {
		n += alloc(unsafe.Sizeof(*ix)) + allocSlice(ix.keys) + allocSlice(ix.from) + allocSlice(ix.ids)
	}
	if pt.compiledPart == nil {
		return n
	}
	n += alloc(unsafe.Sizeof(*pt.compiledPart)) + allocSlice(pt.rules) + allocSlice(pt.matchers)
	for i := range pt.matchers {
		m := &pt.matchers[i]
		n += allocSlice(m.lit) + allocSlice(m.ends)
	}
	if ix := pt.index; ix != nil {
		n += alloc(unsafe.Sizeof(*ix)) + allocSlice(ix.wild) + allocSlice(ix.keyed)
	}
	return n
}

// memSize returns what f holds; 0 for nil.
func (f *segFilter) memSize() int64 {
	if f == nil {
		return 0
	}
	return alloc(unsafe.Sizeof(*f)) + allocSlice(f.sibling) + allocSlice(f.fail) + allocSlice(f.dict) +
		allocSlice(f.label) + allocSlice(f.hasChild) + allocSlice(f.ends) + allocSlice(f.rank) +
		allocSlice(f.wide) + allocSlice(f.wideRank) + allocSlice(f.wideFrom) + allocSlice(f.kids) +
		allocSlice(f.ids) + allocSlice(f.pre) + allocSlice(f.size)
}

// memSize returns what t holds; 0 for nil.
func (t *canonTable) memSize() int64 {
	if t == nil {
		return 0
	}
	return alloc(unsafe.Sizeof(*t)) + allocSlice(t.recs) + alloc(uintptr(len(t.text)))
}
