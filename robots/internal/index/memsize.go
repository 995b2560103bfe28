package index

import (
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// MemSize returns an estimate of the heap r holds besides itself and its
// text, in bytes: its records, compiled patterns, indexes and automaton,
// with the rounding of the allocator (see package heapsize).
func (r *File) MemSize() int64 {
	n := heapsize.Slice(r.crs) + r.cx.memSize() + heapsize.Slice(r.parts) + heapsize.Slice(r.lines)
	for i := range r.parts {
		n += r.parts[i].memSize()
	}
	if r.idx != nil {
		n += heapsize.Alloc(unsafe.Sizeof(*r.idx)) + r.idx.segs.memSize()
	}
	return n
}

// memSize returns what pt holds besides itself and its records, which
// are in its file's arrays.
func (pt *part) memSize() int64 {
	if pt.partX == nil {
		return 0
	}
	n := heapsize.Alloc(unsafe.Sizeof(*pt.partX))
	n += pt.tab.memSize()
	if pt.keys != nil {
		n += heapsize.Alloc(unsafe.Sizeof(*pt.keys)) + heapsize.Slice(pt.keys.kfrom)
	}
	if ix := pt.cix; ix != nil {
		n += heapsize.Alloc(unsafe.Sizeof(*ix)) + heapsize.Slice(ix.keys) + heapsize.Slice(ix.from) + heapsize.Slice(ix.ids)
	}
	if pt.compiledPart == nil {
		return n
	}
	n += heapsize.Alloc(unsafe.Sizeof(*pt.compiledPart)) + heapsize.Slice(pt.rules) + heapsize.Slice(pt.matchers)
	for i := range pt.matchers {
		m := &pt.matchers[i]
		n += heapsize.Slice(m.lit) + heapsize.Slice(m.ends)
	}
	if ix := pt.index; ix != nil {
		n += heapsize.Alloc(unsafe.Sizeof(*ix)) + heapsize.Slice(ix.wild) + heapsize.Slice(ix.keyed)
	}
	return n
}

// memSize returns what f holds; 0 for nil.
func (f *segFilter) memSize() int64 {
	if f == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*f)) + heapsize.Slice(f.sibling) + heapsize.Slice(f.fail) + heapsize.Slice(f.dict) +
		heapsize.Slice(f.label) + heapsize.Slice(f.hasChild) + heapsize.Slice(f.ends) + heapsize.Slice(f.rank) +
		heapsize.Slice(f.wide) + heapsize.Slice(f.wideRank) + heapsize.Slice(f.wideFrom) + heapsize.Slice(f.kids) +
		heapsize.Slice(f.ids) + heapsize.Slice(f.pre) + heapsize.Slice(f.size)
}

// memSize returns what t holds; 0 for nil.
func (t *canonTable) memSize() int64 {
	if t == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*t)) + heapsize.Slice(t.recs) + heapsize.Alloc(uintptr(len(t.text)))
}
