package index

import (
	"bytes"
	"sort"
)

// The keys of a wildcard matcher are its literal segments after the
// first that are 2 octets or more (the octet filter covers shorter ones),
// all of which a path it matches contains; and so are those of a
// wildcard record of a keyed compact part. The keys of a file are those
// of its parts in order, matcher by matcher and record by record,
// segment by segment: [assignKeys] gives each matcher and record the
// range of its keys in that order, where the filter's ids are.

// assignKeys sets the ranges of the keys of the matchers of parts and of
// the records of their keyed compact parts (of r, nil for none), and
// returns the number of those with a key and the size of all keys.
func assignKeys(r *File, parts []*part) (owners, size int) {
	n := 0
	for _, pt := range parts {
		switch {
		case pt == nil:
		case pt.keyed():
			crs := r.crs[pt.from:pt.to]
			kfrom := make([]int32, len(crs)+1)
			for i := range crs {
				kfrom[i] = int32(n)
				k := recordKeys(r, &crs[i], func(key []byte) { size += len(key) })
				n += k
				owners += min(k, 1)
			}
			kfrom[len(crs)] = int32(n)
			pt.keys.kfrom = kfrom
		case !pt.compact():
			for i := range pt.matchers {
				m := &pt.matchers[i]
				m.kfrom = int32(n)
				k := m.eachKey(func(key []byte) { size += len(key) })
				n += k
				owners += min(k, 1)
				m.kto = int32(n)
			}
		}
	}
	return owners, size
}

// fileKeys calls add with the keys of parts (of r) in order.
func fileKeys(r *File, parts []*part, add func(key []byte)) {
	for _, pt := range parts {
		switch {
		case pt == nil:
		case pt.keyed():
			for i := range r.crs[pt.from:pt.to] {
				recordKeys(r, &r.crs[int(pt.from)+i], add)
			}
		case !pt.compact():
			for i := range pt.matchers {
				pt.matchers[i].eachKey(add)
			}
		}
	}
}

// newFileFilter returns the automaton of the keys of parts (of r, nil
// when none is keyed), whose ranges [assignKeys] has set, or nil when
// fewer than [segFilterMin] matchers and records have a key. It only
// reads the parts: a decision may build one for itself.
func newFileFilter(r *File, parts []*part) *segFilter {
	owners := 0
	for _, pt := range parts {
		switch {
		case pt == nil:
		case pt.keyed():
			kfrom := pt.keys.kfrom
			for i := range kfrom[:len(kfrom)-1] {
				if kfrom[i+1] > kfrom[i] {
					owners++
				}
			}
		case !pt.compact():
			for i := range pt.matchers {
				if m := &pt.matchers[i]; m.kto > m.kfrom {
					owners++
				}
			}
		}
	}
	if owners < segFilterMin {
		return nil
	}
	// A key's position in ks is its place in ids.
	var ks [][]byte
	fileKeys(r, parts, func(key []byte) { ks = append(ks, key) })
	order := make([]int32, len(ks))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(i, j int) bool { return bytes.Compare(ks[order[i]], ks[order[j]]) < 0 })
	ids := make([]int32, len(ks))
	keys := make([][]byte, 0, len(ks))
	for _, o := range order {
		if len(keys) == 0 || !bytes.Equal(keys[len(keys)-1], ks[o]) {
			keys = append(keys, ks[o])
		}
		ids[o] = int32(len(keys) - 1)
	}
	f := newSegFilter(keys)
	f.ids = ids
	f.numberKeys()
	return f
}

// eachKey calls add, when not nil, with each key of m, and returns their
// number.
func (m *matcher) eachKey(add func(key []byte)) int {
	n := 0
	for k := 1; k < len(m.ends); k++ {
		if s := m.seg(k); len(s) >= 2 {
			if add != nil {
				add(s)
			}
			n++
		}
	}
	return n
}
