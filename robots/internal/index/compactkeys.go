package index

import "bytes"

// A compact part with many wildcard records (more than [compactWild],
// at most [ptableMin] records and [keyedText] octets of wildcard
// patterns) is keyed rather than compiled: its records stay in the
// file's text, and the keys of its wildcard records (their literal
// segments after the first of 2 octets or more, as a matcher's) join the
// file's [segFilter], or the one a decision builds when the file keeps
// none (see [fileIndex.lazy]). A decision then treats such a record as
// [pathSet.matches] treats a matcher: skipped when a key is absent from
// the path, searched directly within the file's budget, then in the
// path's [occIndex]; so its work is bounded as the compiled form's is,
// at a few bytes a record rather than a compiled matcher's arrays.

// keyedText is the size of the wildcard patterns of a part, or of the
// compact parts of a merged group, above which they are compiled rather
// than keyed: a keyed part has no octet filter, and the few decisions
// that exhaust the direct budget on a file without a filter build one
// (see [fileIndex.lazy]); both cost in proportion to this size.
const keyedText = 32 << 10

// recKeys are the ranges of the keys of the records of a keyed part:
// kfrom[i]:kfrom[i+1] is the range of record i in the file's order of
// keys (see [assignKeys]).
type recKeys struct {
	kfrom []int32
}

// keyRange returns the range of the file filter's ids of the keys of
// record i of pt, a keyed part.
func (pt *part) keyRange(i int) (int32, int32) {
	if pt.keys.kfrom == nil {
		return 0, 0
	}
	return pt.keys.kfrom[i], pt.keys.kfrom[i+1]
}

// key makes pt, a compact part of at most [ptableMin] records, keyed.
func (pt *part) key() {
	if pt.partX == nil {
		pt.partX = &partX{}
	}
	pt.keys = &recKeys{}
}

// keyed reports whether pt is a keyed compact part.
func (pt *part) keyed() bool { return pt.partX != nil && pt.keys != nil && pt.compiledPart == nil }

// keyedMatch reports whether c, record i of pt, a keyed compact part of
// r, with a wildcard, matches the path of ps.
func (pt *part) keyedMatch(r *File, c *crule, i int, ps *pathSet, lz *lazyIndex) bool {
	text := r.crText(c)
	first := text
	if j := bytes.IndexByte(bytesOf(text), '*'); j >= 0 {
		first = text[:j]
	}
	if !bytes.HasPrefix(ps.p, bytesOf(first)) {
		return false // before the filter, which scans the path
	}
	kfrom, kto := pt.keyRange(i)
	return ps.matchesText(text, c.flags()&crAnchored != 0, kfrom, kto, lz)
}

// matchesText is [pathSet.matches] for the segments of a pattern text as
// written (without its final '$'), which has a wildcard, and whose keys
// are ids[kfrom:kto] of the file's [segFilter].
func (ps *pathSet) matchesText(text string, anchored bool, kfrom, kto int32, lz *lazyIndex) bool {
	ps.tried++
	if ps.over || !ps.keysFound(kfrom, kto, lz) {
		return false
	}
	var f *segFilter
	if lz.fi != nil {
		f = lz.fi.segs
	}
	if lz.ix == nil && lz.fi != nil && ps.work >= lz.fi.budget {
		if lz.fi.lazy {
			ps.over = true
			return false
		}
		lz.ix = lz.fi.pool.Get().(*occIndex)
		lz.ix.build(ps.p, f)
	}
	if lz.ix != nil {
		var ids []int32
		if f != nil {
			ids = f.ids[kfrom:kto]
		}
		ps.tried += 1 + len(ids)
		if ok, indexed := matchIndexedText(text, anchored, ps.p, lz.ix, f, ids); indexed {
			return ok
		}
	}
	ps.work += len(ps.p)
	return matchSegments(text, anchored, ps.p)
}

// matchIndexedText is [matcher.matchIndexed] for the segments of a
// pattern text, whose keys' ids are ids.
func matchIndexedText(text string, anchored bool, p []byte, x *occIndex, f *segFilter, ids []int32) (ok, indexed bool) {
	it := segIter{s: text, anchored: anchored, first: true}
	first, _ := it.next()
	if !bytes.HasPrefix(p, bytesOf(first)) {
		return false, true
	}
	pos := len(first)
	seg, more := it.next()
	if !more {
		return !anchored || len(p) == pos, true
	}
	for more {
		next, after := it.next()
		if !after && anchored {
			return len(p)-pos >= len(seg) && bytes.HasSuffix(p, bytesOf(seg)), true
		}
		var id int32
		if len(seg) >= 2 {
			if f == nil || len(ids) == 0 {
				return false, false
			}
			id, ids = ids[0], ids[1:]
		}
		i := x.next(p, bytesOf(seg), id, f, pos)
		if i < 0 {
			return false, true
		}
		pos = i + len(seg)
		seg, more = next, after
	}
	return true, true
}

// recordKeys calls add, when not nil, with each key of record c of r,
// and returns their number: none for a record without a wildcard.
func recordKeys(r *File, c *crule, add func(key []byte)) int {
	if c.flags()&crWild == 0 {
		return 0
	}
	return eachKey(r.crText(c), c.flags()&crAnchored != 0, add)
}

// eachKey calls add, when not nil, with each key of the segments of text,
// and returns their number.
func eachKey(text string, anchored bool, add func(key []byte)) int {
	it := segIter{s: text, anchored: anchored, first: true}
	it.next()
	n := 0
	for seg, ok := it.next(); ok; seg, ok = it.next() {
		if len(seg) >= 2 {
			if add != nil {
				add(bytesOf(seg))
			}
			n++
		}
	}
	return n
}
