package index

// How the groups as written get their parts: each group as written that
// names an agent gets its part (compact or compiled), and the compact
// parts of a merged group that together would cost a decision too much
// are compiled or keyed. The parts live in one array per file, their
// records in another.

// Group adds a group as written: its rules are those added from rule
// first up to rule end (see [Builder.AddRule]); named tells whether it
// names an agent, without which it applies to no crawler and gets no
// part. Groups are numbered from 0 in the order they are added.
func (p *Builder) Group(first, end int, named bool) {
	p.ranges = append(p.ranges, [2]uint32{uint32(first), uint32(end)})
	p.named = append(p.named, named)
}

// ruleRange returns the indexes into p.rules of the rules of group k.
func (p *Builder) ruleRange(k int) (int, int) { return int(p.ranges[k][0]), int(p.ranges[k][1]) }

// Parts builds the part of each group added that names an agent, the
// part of the n-th of them being part n of the file (the number a
// merged group lists its parts by, see [File.Match]).
func (p *Builder) Parts() {
	r := p.r
	n, nrecs := 0, 0
	for i := range p.ranges {
		if !p.named[i] {
			continue
		}
		n++
		if from, to := p.ruleRange(i); !p.compiled && to-from <= compactMax {
			nrecs += p.numRecords(i)
		}
	}
	r.parts = make([]part, n)
	r.crs = make([]crule, 0, nrecs)
	p.parts = make([]*part, len(p.ranges))
	k := 0
	for i := range p.ranges {
		if !p.named[i] {
			continue
		}
		pt := &r.parts[k]
		k++
		if p.compiled || !p.initCompact(pt, i) {
			*pt = *newPart(p.plainRules(i))
		}
		p.parts[i] = pt
	}
}

// CompileLarge compiles the compact parts of each set of groups whose
// compact parts together have more rules, or rules with a wildcard, than
// one compact part may: a decision tries all the parts of its merged
// group. The records of the compact parts left are then packed into an
// array of their size.
//
// sets are the sets of groups as written (their numbers in the order of
// [Builder.Group]) that merged groups join.
func (p *Builder) CompileLarge(sets [][]int) {
	parts := p.parts
	r := p.r
	for _, srcs := range sets {
		n, wild, ncompact := 0, 0, 0
		for _, s := range srcs {
			if pt := parts[s]; pt.compact() {
				ncompact++
				n += int(pt.to - pt.from)
				for _, c := range r.crs[pt.from:pt.to] {
					if c.flags()&crWild != 0 {
						wild++
					}
				}
			}
		}
		if n <= compactSmall || ncompact == 1 {
			if wild <= compactWild || p.keyParts(srcs, parts) {
				continue
			}
		}
		for _, s := range srcs {
			if pt := parts[s]; pt.compact() {
				*pt = *newPart(p.plainRules(s))
			}
		}
	}
	n := 0
	for i := range r.parts {
		if pt := &r.parts[i]; pt.compact() {
			n += int(pt.to - pt.from)
		}
	}
	if n == cap(r.crs) {
		return
	}
	crs := make([]crule, 0, n)
	for i := range r.parts {
		if pt := &r.parts[i]; pt.compact() {
			from := len(crs)
			crs = append(crs, r.crs[pt.from:pt.to]...)
			pt.from, pt.to = uint32(from), uint32(len(crs))
		}
	}
	r.crs = crs
}

// keyParts makes the compact parts of srcs with a wildcard record keyed,
// and reports whether it could: not when one has more than [ptableMin]
// records, or when their wildcard records have more than [keyedText]
// octets.
func (p *Builder) keyParts(srcs []int, parts []*part) bool {
	text := 0
	for _, s := range srcs {
		pt := parts[s]
		if !pt.compact() {
			continue
		}
		if pt.to-pt.from > ptableMin {
			return false
		}
		for _, c := range p.r.crs[pt.from:pt.to] {
			if c.flags()&crWild != 0 {
				text += int(c.n)
			}
		}
	}
	if text > keyedText {
		return false
	}
	for _, s := range srcs {
		pt := parts[s]
		if !pt.compact() {
			continue
		}
		for _, c := range p.r.crs[pt.from:pt.to] {
			if c.flags()&crWild != 0 {
				pt.key()
				break
			}
		}
	}
	return true
}
