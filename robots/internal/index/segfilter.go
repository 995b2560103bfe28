package index

import "math/bits"

// segFilterMin is the number of wildcard matchers with a key (see
// [newFileFilter]) from which an indexed part gets a [segFilter]; fewer
// are searched for one by one.
const segFilterMin = 16

// maxKeys is the number of distinct keys whose set a decision keeps on its
// stack (8 KiB); the set of a filter with more is pooled scratch.
const maxKeys = 1 << 16

// segFilter is an Aho–Corasick automaton over the keys of a part's
// wildcard matchers: their literal segments of length 2 or more, which
// every path they match contains. One pass over a path finds every key
// that occurs in it, in O(len(path)·256 + keys found) steps whatever the
// keys, so that a matcher with a key absent from the path is skipped
// without searching the path: thousands of distinct wildcard rules then
// cost one pass and a few bit tests each, instead of one search of the
// path each.
//
// The trie's nodes are numbered in depth-first order, children in
// increasing order of their label: the first child of node u, if any, is
// u+1, and the nodes that end a key are in the keys' sorted order, so a
// key's id is the number of key nodes before its own. A node costs about
// 14 bytes. Node 0 is the root.
type segFilter struct {
	root     [256]int32 // the root's child by octet, 0 for none
	sibling  []int32    // next child of the same parent, -1 for none
	fail     []int32    // node of the longest proper suffix of the node's string
	dict     []int32    // nearest node on the fail chain that ends a key, 0 for none
	label    []byte     // octet on the edge from the parent
	hasChild []uint64   // bit u: node u has children
	ends     []uint64   // bit u: a key ends at node u
	// Nodes with [wideMin] children or more (bit u of wide) have them in
	// kids[wideFrom[r]:wideFrom[r+1]], in order, r being the number of
	// such nodes before u; wideRank[w] counts those below 64·w.
	wide     []uint64
	wideRank []int32
	wideFrom []int32
	kids     []int32
	rank     []int32 // rank[w]: the number of keys ending at nodes below 64·w
	nkeys    int
	// ids holds the ids of the keys of the file's matchers: those of m
	// are ids[m.kfrom:m.kto].
	ids []int32
	// pre and size number the keys in the dictionary tree, whose root is
	// the empty string and where a key's parent is its longest proper
	// suffix that is a key: pre[id] is the key's preorder number, and its
	// subtree (the keys of which it is a suffix, and itself) is numbered
	// pre[id] to pre[id]+size[id]-1.
	pre, size []int32
}

// newSegFilter builds the automaton of keys, which must be sorted, distinct
// and non-empty; key i gets id i.
func newSegFilter(keys [][]byte) *segFilter {
	// One node per octet of a key, less those of its prefix in common
	// with the key before it.
	n := 1
	for i, k := range keys {
		n += len(k)
		if i > 0 {
			n -= commonPrefix(keys[i-1], k)
		}
	}
	words := (n + 63) >> 6
	f := &segFilter{
		sibling:  make([]int32, n),
		fail:     make([]int32, n),
		dict:     make([]int32, n),
		label:    make([]byte, n),
		hasChild: make([]uint64, words),
		ends:     make([]uint64, words),
		rank:     make([]int32, words),
		nkeys:    len(keys),
	}
	for i := range f.sibling {
		f.sibling[i] = -1
	}
	f.insertSorted(keys)
	for w := 1; w < words; w++ {
		f.rank[w] = f.rank[w-1] + int32(bits.OnesCount64(f.ends[w-1]))
	}
	f.indexWide()
	f.link()
	return f
}

// insertSorted numbers the nodes of keys (sorted, as [newSegFilter] takes
// them) depth-first: labels, first-child and sibling links, root
// children and key ends.
func (f *segFilter) insertSorted(keys [][]byte) {
	// path[d] is the node at depth d of the previous key. A key leaves
	// the previous one's path at their common prefix; its node there, if
	// any, is the last child so far of the parent, and the new key's node
	// becomes its sibling. Otherwise the new node is the parent's first
	// child, and was numbered right after it.
	path := make([]int32, 1, 64)
	var prev []byte
	v := int32(0)
	for _, k := range keys {
		l := commonPrefix(prev, k)
		last := int32(-1)
		if l+1 < len(path) {
			last = path[l+1]
		}
		path = path[:l+1]
		for d := l; d < len(k); d++ {
			v++
			f.label[v] = k[d]
			u := path[d]
			if d == l && last >= 0 {
				f.sibling[last] = v
			} else {
				f.hasChild[u>>6] |= 1 << (u & 63) // and v == u+1
			}
			if u == 0 {
				f.root[k[d]] = v
			}
			path = append(path, v)
		}
		f.ends[v>>6] |= 1 << (v & 63)
		prev = k
	}
}

// link sets the fail and dictionary links.
func (f *segFilter) link() {
	// Fail and dictionary links, breadth first; the root's children have
	// 0 for both.
	queue := make([]int32, 1, len(f.label))
	for qi := 0; qi < len(queue); qi++ {
		u := queue[qi]
		if !f.has(f.hasChild, u) {
			continue
		}
		for v := u + 1; v >= 0; v = f.sibling[v] {
			queue = append(queue, v)
			if u == 0 {
				continue
			}
			c := f.label[v]
			for s := f.fail[u]; ; s = f.fail[s] {
				if t := f.next(s, c); t > 0 {
					f.fail[v] = t
					break
				}
				if s == 0 {
					break // f.fail[v] = 0
				}
			}
			if w := f.fail[v]; f.has(f.ends, w) {
				f.dict[v] = w
			} else {
				f.dict[v] = f.dict[w]
			}
		}
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// has reports whether bit u of set is set.
func (f *segFilter) has(set []uint64, u int32) bool {
	return set[u>>6]&(1<<(u&63)) != 0
}

// keyID returns the id of the key that ends at node u.
func (f *segFilter) keyID(u int32) int32 {
	w := u >> 6
	return f.rank[w] + int32(bits.OnesCount64(f.ends[w]&(1<<(u&63)-1)))
}

// next returns the child of node s labelled c, or -1.
func (f *segFilter) next(s int32, c byte) int32 {
	if s == 0 {
		if t := f.root[c]; t > 0 {
			return t
		}
		return -1
	}
	if !f.has(f.hasChild, s) {
		return -1
	}
	if f.has(f.wide, s) {
		w := s >> 6
		r := f.wideRank[w] + int32(bits.OnesCount64(f.wide[w]&(1<<(s&63)-1)))
		kids := f.kids[f.wideFrom[r]:f.wideFrom[r+1]]
		lo, hi := 0, len(kids)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if f.label[kids[m]] < c {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(kids) && f.label[kids[lo]] == c {
			return kids[lo]
		}
		return -1
	}
	for t := s + 1; t >= 0 && f.label[t] <= c; t = f.sibling[t] {
		if f.label[t] == c {
			return t
		}
	}
	return -1
}

// wideMin is the number of children from which a node's are looked up by
// binary search rather than one by one: a path then costs O(log 256) steps
// per failure link followed, whatever the keys.
const wideMin = 8

// indexWide sets wide, wideRank, wideFrom and kids.
func (f *segFilter) indexWide() {
	words := len(f.hasChild)
	f.wide, f.wideRank = make([]uint64, words), make([]int32, words)
	f.wideFrom = []int32{0}
	for u := int32(1); u < int32(len(f.label)); u++ {
		if !f.has(f.hasChild, u) {
			continue
		}
		n := 0
		for t := u + 1; t >= 0 && n < wideMin; t = f.sibling[t] {
			n++
		}
		if n < wideMin {
			continue
		}
		f.wide[u>>6] |= 1 << (u & 63)
		for t := u + 1; t >= 0; t = f.sibling[t] {
			f.kids = append(f.kids, t)
		}
		f.wideFrom = append(f.wideFrom, int32(len(f.kids)))
	}
	for w := 1; w < words; w++ {
		f.wideRank[w] = f.wideRank[w-1] + int32(bits.OnesCount64(f.wide[w-1]))
	}
}

// step returns the state after reading c in state s, following failure
// links until a transition exists or the root is reached.
func (f *segFilter) step(s int32, c byte) int32 {
	for {
		if t := f.next(s, c); t > 0 {
			return t
		}
		if s == 0 {
			return 0
		}
		s = f.fail[s]
	}
}

// lastKey returns the longest key ending in state s: s itself when it ends
// a key, else the head of its dictionary chain (0 when none).
func (f *segFilter) lastKey(s int32) int32 {
	if f.has(f.ends, s) {
		return s
	}
	return f.dict[s]
}

// scan sets in found (of at least (f.nkeys+63)/64 words, all zero) the bit
// of every key that occurs in p.
func (f *segFilter) scan(p []byte, found []uint64) {
	s := int32(0)
	for _, c := range p {
		s = f.step(s, c)
		f.markChain(found, f.lastKey(s))
	}
}

// markChain sets in found the bits of the keys that end where key o
// ends: o and its dictionary chain. A key already found had its whole
// chain set then, so it stops there: each key is set once, and each
// position costs O(1) more.
func (f *segFilter) markChain(found []uint64, o int32) {
	for o > 0 {
		id := f.keyID(o)
		w, b := id>>6, uint64(1)<<(id&63)
		if found[w]&b != 0 {
			return
		}
		found[w] |= b
		o = f.dict[o]
	}
}

// numberKeys sets pre and size.
func (f *segFilter) numberKeys() {
	n := int32(f.nkeys)
	f.pre, f.size = make([]int32, n), make([]int32, n)
	// Children lists of the dictionary tree, by key id; -1 is the root.
	head := make([]int32, n+1) // head[id+1]: first child of id, -1 none
	next := make([]int32, n)   // next sibling
	for i := range head {
		head[i] = -1
	}
	for u := int32(1); u < int32(len(f.label)); u++ {
		if !f.has(f.ends, u) {
			continue
		}
		id, parent := f.keyID(u), int32(-1)
		if d := f.dict[u]; d > 0 {
			parent = f.keyID(d)
		}
		next[id] = head[parent+1]
		head[parent+1] = id
	}
	// Preorder, iteratively; size is set when a key's subtree is done:
	// the stack holds keys, each followed by its children.
	num := int32(0)
	stack := make([]int32, 0, 64)
	for c := head[0]; c >= 0; c = next[c] {
		stack = append(stack, c)
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id < 0 { // the end of key ^id's subtree
			k := ^id
			f.size[k] = num - f.pre[k]
			continue
		}
		f.pre[id] = num
		num++
		stack = append(stack, ^id)
		for c := head[id+1]; c >= 0; c = next[c] {
			stack = append(stack, c)
		}
	}
}

// scanLongest appends to x, for each position of p where a key ends, the
// preorder number of the longest such key and the position; with found
// not nil, it also does what scan does, in the same pass.
func (f *segFilter) scanLongest(p []byte, x *occIndex, found []uint64) {
	s := int32(0)
	for i, c := range p {
		s = f.step(s, c)
		o := f.lastKey(s)
		if o > 0 {
			x.keyed = append(x.keyed, f.pre[f.keyID(o)])
			x.ends = append(x.ends, int32(i))
		}
		if found != nil {
			f.markChain(found, o)
		}
	}
}
