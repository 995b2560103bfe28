package index

import "math/bits"

// wavelet is a wavelet matrix over a sequence of non-negative values below
// 2^levels: it finds the smallest value at least x among those at indexes
// [lo, hi) in O(levels) steps. Level l holds, for each element in that
// level's order, bit levels-1-l of its value; the next level's order puts
// the elements with a 0 there first, each side in its previous order.
type wavelet struct {
	levels int
	words  int      // words per level
	bits   []uint64 // levels·words: the bits of each level
	ranks  []int32  // levels·words: the 1 bits of the level before each word
	zeros  []int32  // per level: the number of 0 bits
}

// build indexes vals, all below limit, using cur and nxt (of len(vals)
// each at least) as scratch.
func (w *wavelet) build(vals []int32, limit int, cur, nxt []int32) {
	n := len(vals)
	w.levels = bits.Len(uint(limit))
	w.words = n>>6 + 1
	size := w.levels * w.words
	if cap(w.bits) < size {
		w.bits, w.ranks = make([]uint64, size), make([]int32, size)
	}
	w.bits, w.ranks = w.bits[:size], w.ranks[:size]
	clear(w.bits)
	if cap(w.zeros) < w.levels {
		w.zeros = make([]int32, w.levels)
	}
	w.zeros = w.zeros[:w.levels]
	cur, nxt = cur[:n], nxt[:n]
	copy(cur, vals)
	for l := 0; l < w.levels; l++ {
		shift := uint(w.levels - 1 - l)
		bs := w.bits[l*w.words : (l+1)*w.words]
		z := 0
		for i, v := range cur {
			if v>>shift&1 != 0 {
				bs[i>>6] |= 1 << (i & 63)
			} else {
				nxt[z] = v
				z++
			}
		}
		w.zeros[l] = int32(z)
		o := z
		for _, v := range cur {
			if v>>shift&1 != 0 {
				nxt[o] = v
				o++
			}
		}
		rs := w.ranks[l*w.words : (l+1)*w.words]
		r := int32(0)
		for i, b := range bs {
			rs[i] = r
			r += int32(bits.OnesCount64(b))
		}
		cur, nxt = nxt, cur
	}
}

// rank1 returns the number of 1 bits of level l before index i.
func (w *wavelet) rank1(l, i int) int {
	k := l*w.words + i>>6
	return int(w.ranks[k]) + bits.OnesCount64(w.bits[k]&(1<<(i&63)-1))
}

// nextValue returns the smallest value at least x among those at indexes
// [lo, hi), or -1.
func (w *wavelet) nextValue(lo, hi int, x int32) int32 {
	// Follow x's bits down while some value shares them; remember the
	// deepest level where x has a 0 and some value a 1 there: if no value
	// equals x, the answer is the smallest under that branch.
	altL, altLo, altHi, altVal := -1, 0, 0, int32(0)
	val := int32(0)
	l := 0
	for ; l < w.levels && lo < hi; l++ {
		shift := uint(w.levels - 1 - l)
		z := int(w.zeros[l])
		r1lo, r1hi := w.rank1(l, lo), w.rank1(l, hi)
		if x>>shift&1 == 0 {
			if r1lo < r1hi {
				altL, altLo, altHi, altVal = l+1, z+r1lo, z+r1hi, val|1<<shift
			}
			lo, hi = lo-r1lo, hi-r1hi
		} else {
			lo, hi = z+r1lo, z+r1hi
			val |= 1 << shift
		}
	}
	if l == w.levels && lo < hi {
		return val // == x
	}
	if altL < 0 {
		return -1
	}
	// The smallest value under the branch: 0 bits wherever some value
	// has one.
	lo, hi, val = altLo, altHi, altVal
	for l := altL; l < w.levels; l++ {
		shift := uint(w.levels - 1 - l)
		z := int(w.zeros[l])
		r1lo, r1hi := w.rank1(l, lo), w.rank1(l, hi)
		if lo-r1lo < hi-r1hi {
			lo, hi = lo-r1lo, hi-r1hi
		} else {
			lo, hi = z+r1lo, z+r1hi
			val |= 1 << shift
		}
	}
	return val
}
