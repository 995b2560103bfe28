package robots

import "unsafe"

// A parsed file is cached for as long as its origin is crawled, often
// with hundreds of thousands of others, and every object it holds is one
// more for the garbage collector to mark at each collection. Its arrays
// that hold no pointers (the rule records, the agent spans, the merged
// groups' part indexes, the agent index and the line checkpoints) are
// therefore moved, once the file is parsed, into one allocation, with
// the arrays of its groups' cindexes: the collector marks one object
// where it marked five or more, and never scans it.

// plain are the element types of the arrays [Robots.pack] moves: types
// without pointers, so that an array of uint64 may hold them without
// hiding a pointer from the collector.
type plain interface {
	crule | span | uint32 | entry | byte | uint16
}

// pack moves r's pointer-free arrays into one array of uint64. r must
// not be changed afterwards (no array of r is appended to after Parse).
func (r *Robots) pack() {
	n := r.packedWords()
	if n == 0 {
		return
	}
	arena := make([]uint64, n)
	off := 0
	r.crs = carve(arena, &off, r.crs)
	r.agents = carve(arena, &off, r.agents)
	r.gparts = carve(arena, &off, r.gparts)
	r.byAgent = carve(arena, &off, r.byAgent)
	r.lines = carve(arena, &off, r.lines)
	for i := range r.written {
		if ix := r.written[i].part.cindex(); ix != nil {
			ix.keys = carve(arena, &off, ix.keys)
			ix.from = carve(arena, &off, ix.from)
			ix.ids = carve(arena, &off, ix.ids)
		}
	}
}

// packedWords is the length of the arena of pack.
func (r *Robots) packedWords() int {
	n := words(r.crs) + words(r.agents) + words(r.gparts) + words(r.byAgent) + words(r.lines)
	for i := range r.written {
		if ix := r.written[i].part.cindex(); ix != nil {
			n += words(ix.keys) + words(ix.from) + words(ix.ids)
		}
	}
	return n
}

// packedSize is what the allocation of pack takes.
func (r *Robots) packedSize() int64 { return alloc(uintptr(r.packedWords()) * 8) }

// cindex returns pt's cindex, or nil.
func (pt *part) cindex() *cindex {
	if pt.partX == nil {
		return nil
	}
	return pt.cix
}

// words is the number of uint64 that hold the elements of s, each array
// starting at a multiple of 8 bytes (the largest alignment of [plain]).
func words[T plain](s []T) int {
	var t T
	return (len(s)*int(unsafe.Sizeof(t)) + 7) / 8
}

// carve copies s to arena at word *off, advances *off past it and
// returns the copy, whose capacity is its length: appending to it
// reallocates and never writes over the next array.
func carve[T plain](arena []uint64, off *int, s []T) []T {
	if len(s) == 0 {
		return nil
	}
	dst := unsafe.Slice((*T)(unsafe.Pointer(&arena[*off])), len(s))
	copy(dst, s)
	*off += words(s)
	return dst
}
