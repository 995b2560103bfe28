package robots

import (
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
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
	return unsafe.Slice(unsafe.StringData(r.text), len(r.text))
}

// memSize computes the estimate MemSize returns; sets are the file's
// usage sets.
func (r *Robots) memSize(sets []*usageSet) int64 {
	// The strings of rules, agents, sitemaps and extensions share r.text.
	n := heapsize.Alloc(unsafe.Sizeof(*r)) + heapsize.String(r.text) + heapsize.Alloc(unsafe.Sizeof(*r.ix)) + r.ix.MemSize() +
		heapsize.Slice(r.written) + heapsize.Slice(r.agents) + heapsize.Slice(r.groups) + heapsize.Slice(r.gparts) +
		heapsize.Slice(r.byAgent) + heapsize.Slice(r.sitemaps) + heapsize.Slice(r.extensions) + heapsize.Slice(r.licenses)
	for _, s := range sets {
		n += s.memSize()
	}
	n += r.usage.memSize()
	for i := range r.groups {
		n += r.groups[i].usage.memSize()
	}
	return n
}
