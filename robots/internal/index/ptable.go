package index

import (
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// ptableMin is the number of records from which a compact part finds
// its plain records by the hash of their text (a ptable) rather than by
// trying them one by one after a [cindex].
const ptableMin = 2048

// ptable finds the records of a large compact part that match a path:
// a plain record matches a path only when its text is the path's prefix
// of its length, so a lookup hashes the path's prefixes of the lengths
// the part's plain records have, and tries the few records found; the
// records with a wildcard (at most [compactWild]) are tried one by one.
// The hash is seeded per part, so no file can choose its collisions.
type ptable struct {
	seed  maphash.Seed
	slots []uint32 // 1 + the index of a plain record, at the hash of its text (linear probing); 0 for none
	lens  []uint16 // the lengths of the plain records' texts, ascending, each once
	wild  []uint32 // the indexes of the records with a wildcard, ascending
}

// newPtable returns the ptable of crs, the records of a compact part of r.
func newPtable(r *File, crs []crule) *ptable {
	t := &ptable{seed: maphash.MakeSeed()}
	nplain, nwild := 0, 0
	lens := make([]uint16, 0, len(crs))
	for i := range crs {
		switch c := &crs[i]; {
		case c.flags()&crEmpty != 0:
		case c.flags()&crWild != 0:
			nwild++
		default:
			nplain++
			lens = append(lens, c.n)
		}
	}
	slices.Sort(lens)
	t.lens = slices.Clone(slices.Compact(lens))
	t.wild = make([]uint32, 0, nwild)
	for i := range crs {
		if c := &crs[i]; c.flags()&(crEmpty|crWild) == crWild {
			t.wild = append(t.wild, uint32(i))
		}
	}
	size := 1
	for size < nplain+nplain/2+1 {
		size *= 2
	}
	t.slots = make([]uint32, size)
	mask := uint32(size - 1)
	for i := range crs {
		c := &crs[i]
		if c.flags()&(crEmpty|crWild) != 0 {
			continue
		}
		h := uint32(maphash.String(t.seed, r.crText(c))) & mask
		for t.slots[h] != 0 {
			h = (h + 1) & mask
		}
		t.slots[h] = uint32(i) + 1
	}
	return t
}

// first returns the index of the record of crs (in precedence order, the
// records of a compact part of r) of highest precedence that matches the
// path p, or -1.
func (t *ptable) first(r *File, crs []crule, p []byte) int {
	best := len(crs)
	mask := uint32(len(t.slots) - 1)
	for _, n := range t.lens {
		if int(n) > len(p) {
			break
		}
		for h := uint32(maphash.Bytes(t.seed, p[:n])) & mask; t.slots[h] != 0; h = (h + 1) & mask {
			if k := int(t.slots[h] - 1); k < best && crs[k].n == n && r.crMatch(&crs[k], p) {
				best = k
			}
		}
	}
	for _, k := range t.wild {
		if int(k) >= best {
			break
		}
		if r.crMatch(&crs[k], p) {
			best = int(k)
			break
		}
	}
	if best == len(crs) {
		return -1
	}
	return best
}

// memSize returns what t holds.
func (t *ptable) memSize() int64 {
	if t == nil {
		return 0
	}
	return heapsize.Alloc(unsafe.Sizeof(*t)) + heapsize.Slice(t.slots) + heapsize.Slice(t.lens) + heapsize.Slice(t.wild)
}
