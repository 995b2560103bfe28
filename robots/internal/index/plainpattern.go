package index

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Most patterns need no normalisation: ASCII octets that a URI may hold
// literally, no '%'. Their compiled segments are by construction the text
// split at its runs of '*' (the canonical form of such an octet is the
// octet), and their precedence is their length, so a compact part takes
// them as written without compiling them. TestPlainPattern checks that
// every pattern plainPattern accepts compiles into the record it gives.

// plainPattern returns the flags [crAnchored] and [crWild] of the record of
// pattern (non-empty), and whether pattern is plain: every octet but a
// final '$' is a '*' or an octet that [appendCanonAt] keeps as it is
// (not '%', one that a URI may hold literally, hence ASCII). The record's
// segments are then the text split at its runs of '*', and its precedence
// len(pattern).
func plainPattern(pattern string) (uint8, bool) {
	var flags uint8
	end := len(pattern)
	if pattern[end-1] == '$' {
		flags |= crAnchored
		end--
	}
	// '*' is one of the octets a URI may hold literally, '%' is not.
	for i := 0; i < end; i++ {
		c := pattern[i]
		w := uriRaw0
		if c >= 64 {
			w = uriRaw1
		}
		if c >= 128 || w>>(c&63)&1 == 0 {
			return 0, false
		}
	}
	if strings.IndexByte(pattern[:end], '*') >= 0 {
		flags |= crWild
	}
	return flags, true
}

// sortCrules sorts the records of one part as matcher.before orders
// rules: a longer pattern, else Allow over Disallow, else the earlier line
// (a directory record right after its rule).
// No two records of a part have the same key (a rule's offset is its
// own; its directory's record differs in [crDir]), so the order is the
// stable sort's. The keys, with each record's index in their low bits,
// are sorted as integers, and the records then permuted in place.
func sortCrules(crs []crule) {
	if len(crs) > 1<<sortIdxBits {
		slices.SortFunc(crs, func(a, b crule) int { return cmp.Compare(a.sortKey(), b.sortKey()) })
		return
	}
	var buf [128]uint64
	keys := buf[:0]
	if len(crs) > len(buf) {
		keys = make([]uint64, 0, len(crs))
	}
	for i := range crs {
		keys = append(keys, crs[i].sortKey()<<sortIdxBits|uint64(i))
	}
	slices.Sort(keys)
	// Position i takes the record at index keys[i]&idx; follow each
	// cycle of the permutation once, marking the keys done.
	const idx, done = 1<<sortIdxBits - 1, 1 << 63
	for i := range keys {
		if keys[i]&done != 0 {
			continue
		}
		first, j := crs[i], i
		for {
			keys[j] |= done
			s := int(keys[j] & idx)
			if s == i {
				crs[j] = first
				break
			}
			crs[j], j = crs[s], s
		}
	}
}

// sortIdxBits is the number of bits of a record's index in [sortCrules]:
// a part of more records is sorted by comparison.
const sortIdxBits = 12

// sortKey returns the key of c in the order of [sortCrules]: the higher
// precedence, then Allow, then the smaller offset, then the rule before
// its directory. It has 45 bits (offsets are below [crMaxText]).
func (c *crule) sortKey() uint64 {
	k := uint64(math.MaxUint16-c.prio)<<29 | uint64(c.off())<<1
	if c.flags()&crAllow == 0 {
		k |= 1 << 28
	}
	if c.flags()&crDir != 0 {
		k |= 1
	}
	return k
}
