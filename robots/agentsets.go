package robots

import (
	"cmp"
	"slices"
)

// Which groups as written each agent selects: the product tokens of the
// user-agent lines, compared case-insensitively, are sorted once; a run
// of equal tokens gives the token's first spelling (its first
// occurrence), its groups, and the repetitions within a group, which are
// dropped. Tokens naming the same set of groups then share one set,
// found by a hash of the set.

// dupAgent marks, in parser.agents, a repetition of an agent within its
// group.
const dupAgent = ^span(0)

// token is a distinct product token of the groups as written.
type token struct {
	first uint32    // the index into parser.agents of its first spelling
	set   uint32    // the index of its set of groups
	srcs  [2]uint32 // the range of the list of the groups naming it, in file order
}

// tokOcc is an occurrence of a product token: its first octets, its
// index into parser.agents and the index into parser.src of its group.
type tokOcc struct {
	key     uint64 // foldKey of the token
	at, grp uint32
}

// foldKey returns the first 8 octets of token, lower-cased, big-endian,
// padded with zeros: a token has no NUL, so foldKey orders tokens as
// [foldCompare] does, but for those whose keys are equal.
func foldKey(token string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(token) {
			c := token[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			k |= uint64(c)
		}
	}
	return k
}

// compare orders x and y, occurrences of the tokens of r, as [foldCompare]
// orders their tokens.
func (x *tokOcc) compare(y *tokOcc, r *Robots, agents []span) int {
	if x.key != y.key {
		return cmp.Compare(x.key, y.key)
	}
	return foldCompare(r.str(agents[x.at]), r.str(agents[y.at]))
}

// tokens returns the distinct tokens in the order of [foldCompare], the
// lists of groups their srcs are ranges of, and the groups naming "*"; it
// marks the repetitions of an agent within a group [dupAgent].
func (p *parser) tokens() (toks []token, lists, global []int) {
	r := p.r
	n, nglobal := 0, 0
	for _, a := range p.agents {
		if a != 0 {
			n++
		} else {
			nglobal++
		}
	}
	var buf [32]tokOcc
	occ := buf[:0]
	if n > len(buf) {
		occ = make([]tokOcc, 0, n)
	}
	for gi := range p.src {
		g := &p.src[gi]
		from, to := g.agentRange()
		for at := from; at < to; at++ {
			if p.agents[at] != 0 {
				occ = append(occ, tokOcc{foldKey(r.str(p.agents[at])), uint32(at), uint32(gi)})
			}
		}
	}
	slices.SortFunc(occ, func(x, y tokOcc) int {
		if c := x.compare(&y, r, p.agents); c != 0 {
			return c
		}
		return cmp.Compare(x.at, y.at)
	})
	// The group lists, all in one array that never grows.
	lists = make([]int, 0, n+nglobal)
	toks = make([]token, 0, n)
	for i := 0; i < len(occ); {
		j := i + 1
		for j < len(occ) && occ[i].compare(&occ[j], r, p.agents) == 0 {
			j++
		}
		from := len(lists)
		for k := i; k < j; k++ {
			if k > i && occ[k].grp == occ[k-1].grp {
				p.agents[occ[k].at] = dupAgent
				continue
			}
			lists = append(lists, int(occ[k].grp))
		}
		toks = append(toks, token{first: occ[i].at, srcs: [2]uint32{uint32(from), uint32(len(lists))}})
		i = j
	}
	from := len(lists)
	for gi := range p.src {
		if p.src[gi].global {
			lists = append(lists, gi)
		}
	}
	return toks, lists, lists[from:]
}

// setLinear is the number of sets up to which a [setTable] compares a new
// set with each; beyond, it keeps its sets by hash.
const setLinear = 32

// setTable finds the sets of groups already seen.
type setTable struct {
	sets   [][]int
	hashes []uint64
	last   map[uint64]int // the last set of each hash, past setLinear sets
	prev   []int          // the set before each with the same hash, or -1
}

// hashSet returns an FNV-1a hash of srcs.
func hashSet(srcs []int) uint64 {
	h := uint64(14695981039346656037)
	for _, s := range srcs {
		for v := uint64(s); ; v >>= 8 {
			h = (h ^ v&0xff) * 1099511628211
			if v < 0x100 {
				break
			}
		}
		h = (h ^ 0x100) * 1099511628211 // ends each element
	}
	return h
}

// add returns the index of the set equal to srcs, adding srcs when there
// is none.
func (st *setTable) add(srcs []int) int {
	h := hashSet(srcs)
	if st.last == nil && len(st.sets) > setLinear {
		st.last = make(map[uint64]int, 2*len(st.sets))
		st.prev = make([]int, len(st.sets), 2*len(st.sets))
		for i, hi := range st.hashes {
			st.prev[i] = -1
			if j, ok := st.last[hi]; ok {
				st.prev[i] = j
			}
			st.last[hi] = i
		}
	}
	if st.last == nil {
		for i, hi := range st.hashes {
			if hi == h && slices.Equal(st.sets[i], srcs) {
				return i
			}
		}
	} else {
		j, ok := st.last[h]
		for ok && j >= 0 {
			if slices.Equal(st.sets[j], srcs) {
				return j
			}
			j = st.prev[j]
		}
		st.prev = append(st.prev, -1)
		if ok {
			st.prev[len(st.prev)-1] = st.last[h]
		}
		st.last[h] = len(st.sets)
	}
	st.sets = append(st.sets, srcs)
	st.hashes = append(st.hashes, h)
	return len(st.sets) - 1
}

// groupSets returns the sets of groups the tokens and "*" select, each
// once, in order of their first group as written (ties in order of first
// appearance, "*" last), and sets each token's set; global is the index
// of the set of "*", or -1.
func (p *parser) groupSets(toks []token, lists, globalSrcs []int) (sets [][]int, global int) {
	// The tokens in order of first appearance: first[a] is 1 + the index
	// of the token first spelled at p.agents[a].
	var buf [64]int32
	first := buf[:0]
	if len(p.agents) > len(buf) {
		first = make([]int32, 0, len(p.agents))
	}
	first = first[:len(p.agents)]
	for k := range toks {
		first[toks[k].first] = int32(k + 1)
	}
	st := setTable{sets: make([][]int, 0, len(toks)+1), hashes: make([]uint64, 0, len(toks)+1)}
	for _, f := range first {
		if f != 0 {
			t := &toks[f-1]
			t.set = uint32(st.add(lists[t.srcs[0]:t.srcs[1]]))
		}
	}
	// A token's first group is the group of its first appearance, so
	// the sets are in order of their first group already.
	if len(globalSrcs) == 0 {
		return st.sets, -1
	}
	n := len(st.sets)
	if g := st.add(globalSrcs); g < n {
		return st.sets, g
	}
	// A new set for "*" goes after the sets of its first group.
	sets = st.sets[:n]
	q := n
	for q > 0 && sets[q-1][0] > globalSrcs[0] {
		q--
	}
	for k := range toks {
		if int(toks[k].set) >= q {
			toks[k].set++
		}
	}
	return slices.Insert(sets, q, globalSrcs), q
}
