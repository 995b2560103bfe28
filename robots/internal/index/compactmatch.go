package index

import (
	"math"
	"sort"
)

// cindexMin is the number of records from which a compact part gets a
// cindex.
const cindexMin = 32

// cindex narrows the records of a compact part to try for a path by the
// path's second octet, as [matchIndex] does for matchers: keyed[from[k]:
// from[k+1]] are the records whose pattern starts with "/" and keys[k];
// wild are those that start otherwise (a wildcard, or "/" alone). Both
// lists are in precedence order.
type cindex struct {
	keys []byte
	from []uint16
	ids  []uint16 // keyed, then wild from index wild on
	wild uint16
}

// newCindex returns the cindex of crs, or nil when it has too few or too
// many records.
func newCindex(r *File, crs []crule) *cindex {
	if len(crs) < cindexMin || len(crs) > math.MaxUint16 {
		return nil
	}
	var count [256]int
	key := func(c *crule) int {
		if t := r.crText(c); c.flags()&crEmpty == 0 && len(t) >= 2 && t[0] == '/' && t[1] != '*' {
			return int(t[1])
		}
		return -1
	}
	nwild := 0
	for i := range crs {
		if k := key(&crs[i]); k >= 0 {
			count[k]++
		} else {
			nwild++
		}
	}
	ix := &cindex{ids: make([]uint16, len(crs))}
	var next [256]int
	n := 0
	for k, c := range count {
		if c > 0 {
			ix.keys = append(ix.keys, byte(k))
			ix.from = append(ix.from, uint16(n))
			next[k] = n
			n += c
		}
	}
	ix.from = append(ix.from, uint16(n))
	ix.wild = uint16(n)
	w := n
	for i := range crs {
		if k := key(&crs[i]); k >= 0 {
			ix.ids[next[k]] = uint16(i)
			next[k]++
		} else {
			ix.ids[w] = uint16(i)
			w++
		}
	}
	return ix
}

// beatsBest reports whether c would replace best (nil for none), as
// matcher.beats.
func (c *crule) beatsBest(best *matcher) bool {
	return best == nil || int(c.prio) > best.prio || int(c.prio) == best.prio && c.flags()&crAllow != 0 && !best.allow
}

// firstCompact is firstMatch for a compact part of r: the index of the
// record of highest precedence that matches p and beats best, or -1.
func (pt *part) firstCompact(r *File, ps *pathSet, lz *lazyIndex, best *matcher) int {
	crs, p, kd := r.crs[pt.from:pt.to], ps.p, pt.keyed()
	if pt.partX != nil && pt.tab != nil {
		if i := pt.tab.first(r, crs, p); i >= 0 && crs[i].beatsBest(best) {
			return i
		}
		return -1
	}
	if pt.partX == nil || pt.cix == nil {
		for i := range crs {
			c := &crs[i]
			if !c.beatsBest(best) {
				return -1
			}
			if c.flags()&crWild != 0 && kd {
				if pt.keyedMatch(r, c, i, ps, lz) {
					return i
				}
			} else if r.crMatch(c, p) {
				return i
			}
		}
		return -1
	}
	ix := pt.cix
	var keyed []uint16
	if len(p) >= 2 {
		if k := sort.Search(len(ix.keys), func(i int) bool { return ix.keys[i] >= p[1] }); k < len(ix.keys) && ix.keys[k] == p[1] {
			keyed = ix.ids[ix.from[k]:ix.from[k+1]]
		}
	}
	wild := ix.ids[ix.wild:]
	for len(wild) > 0 || len(keyed) > 0 {
		var i uint16
		if len(keyed) == 0 || len(wild) > 0 && wild[0] < keyed[0] {
			i, wild = wild[0], wild[1:]
		} else {
			i, keyed = keyed[0], keyed[1:]
		}
		c := &crs[i]
		if !c.beatsBest(best) {
			return -1
		}
		if c.flags()&crWild != 0 && kd {
			if pt.keyedMatch(r, c, int(i), ps, lz) {
				return int(i)
			}
		} else if r.crMatch(c, p) {
			return int(i)
		}
	}
	return -1
}

// compactUniversal returns, for [File.AllowsNothing], the highest precedence of
// a Disallow of pt, a compact part of r, matching every path, or -1 when
// none does; whether an Allow outranks it is [part.compactAllowFrom]'s
// answer.
func (pt *part) compactUniversal(r *File) int {
	best := -1
	crs := r.crs[pt.from:pt.to]
	for i := range crs {
		c := &crs[i]
		if c.flags()&(crAllow|crAnchored|crEmpty) == 0 && int(c.prio) > best && isUniversal(r.crText(c)) {
			best = int(c.prio)
		}
	}
	return best
}

// compactAllowFrom reports whether an Allow of pt, a compact part of r,
// that can match some path has a precedence of at least prio.
func (pt *part) compactAllowFrom(r *File, prio int) bool {
	crs := r.crs[pt.from:pt.to]
	for i := range crs {
		c := &crs[i]
		if c.flags()&crAllow != 0 && c.flags()&crEmpty == 0 && int(c.prio) >= prio {
			if t := r.crText(c); t == "" || t[0] == '/' || t[0] == '*' {
				return true
			}
		}
	}
	return false
}

// isUniversal reports whether a pattern text (not anchored) matches every
// path: its octets other than '*' are none or one '/'.
func isUniversal(t string) bool {
	slash := false
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '*':
		case t[i] == '/' && !slash:
			slash = true
		default:
			return false
		}
	}
	return true
}

// AllowsNothing reports whether a Disallow rule of the group made of
// the parts gparts (indexes of the groups as written) matches every path
// and no Allow rule that could match some path takes precedence over it.
func (r *File) AllowsNothing(gparts []uint32) bool {
	best := -1
	for _, w := range gparts {
		pt := &r.parts[w]
		if pt.compact() {
			best = max(best, pt.compactUniversal(r))
			continue
		}
		for i := range pt.matchers {
			if m := &pt.matchers[i]; !m.allow && m.universal() && m.prio > best {
				best = m.prio
			}
		}
	}
	if best < 0 {
		return false
	}
	for _, w := range gparts {
		pt := &r.parts[w]
		if pt.compact() {
			if pt.compactAllowFrom(r, best) {
				return false
			}
			continue
		}
		for i := range pt.matchers {
			if m := &pt.matchers[i]; m.allow && m.prio >= best && m.canMatch() {
				return false
			}
		}
	}
	return true
}
