package robots

import "unsafe"

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

// alloc returns what an allocation of n bytes takes: the allocator's
// size classes round small objects up to a multiple of 16 bytes, and
// larger ones by up to an eighth.
func alloc(n uintptr) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 128:
		return int64((n + 15) &^ 15)
	default:
		return int64(n + n/16)
	}
}

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
