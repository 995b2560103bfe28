package robots

// How the groups as written become the groups decisions use: each group
// as written gets its part (compact or compiled), and the agents that
// name the same set of groups share one merged group. The parts, the
// merged groups and their agents live in a few arrays per file rather
// than in one allocation each.

// buildParts sets r.written, r.agents and r.crs, and returns the part of
// each group as written (nil for those that name no agent).
func (p *parser) buildParts() []*part {
	r := p.r
	n, nagents, nrecs := 0, 0, 0
	for i := range p.src {
		g := &p.src[i]
		from, to := g.agentRange()
		if from == to {
			continue // applies to no crawler
		}
		n++
		for _, a := range p.agents[from:to] {
			if a != dupAgent {
				nagents++
			}
		}
		if from, to := g.ruleRange(); !p.compiled && to-from <= compactMax {
			nrecs += p.numRecords(g)
		}
	}
	r.written = make([]written, n)
	r.agents = make([]span, 0, nagents)
	r.crs = make([]crule, 0, nrecs)
	parts := make([]*part, len(p.src))
	k := 0
	for i := range p.src {
		g := &p.src[i]
		from, to := g.agentRange()
		if from == to {
			continue
		}
		g.written = uint32(k)
		w := &r.written[k]
		k++
		if p.compiled || !p.initCompact(&w.part, g) {
			w.part = *newPart(p.plainRules(g))
		}
		parts[i] = &w.part
		w.agents[0] = uint32(len(r.agents))
		for _, a := range p.agents[from:to] {
			if a != dupAgent {
				r.agents = append(r.agents, a)
			}
		}
		w.agents[1], w.delay = uint32(len(r.agents)), g.delay
	}
	return parts
}

// compileLarge compiles the compact parts of each set of groups whose
// compact parts together have more rules, or rules with a wildcard, than
// one compact part may: a decision tries all the parts of its merged
// group. The records of the compact parts left are then packed into an
// array of their size.
func (p *parser) compileLarge(sets [][]int, parts []*part) {
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
				*pt = *newPart(p.plainRules(&p.src[s]))
			}
		}
	}
	n := 0
	for i := range r.written {
		if pt := &r.written[i].part; pt.compact() {
			n += int(pt.to - pt.from)
		}
	}
	if n == cap(r.crs) {
		return
	}
	crs := make([]crule, 0, n)
	for i := range r.written {
		if pt := &r.written[i].part; pt.compact() {
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
func (p *parser) keyParts(srcs []int, parts []*part) bool {
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

// newMerged sets r.groups and r.gparts to the merged groups of sets (each
// a set of groups as written), their parts the indexes into r.written of
// the groups' parts.
func (p *parser) newMerged(sets [][]int) {
	r := p.r
	r.groups = make([]merged, len(sets))
	nparts := 0
	for _, srcs := range sets {
		nparts += len(srcs)
	}
	r.gparts = make([]uint32, 0, nparts)
	for i, srcs := range sets {
		g := &r.groups[i]
		g.from = uint32(len(r.gparts))
		for _, s := range srcs {
			sg := &p.src[s]
			r.gparts = append(r.gparts, sg.written)
		}
		g.to = uint32(len(r.gparts))
		g.usage = p.groupUsage(srcs)
	}
}

// merge sets the merged groups of r, its agent index and its global
// group: tokens naming the same set of groups share one merged group.
// The merged groups are in order of their first group as written.
func (p *parser) merge(toks []token, lists, globalSrcs []int, parts []*part) {
	r := p.r
	sets, global := p.groupSets(toks, lists, globalSrcs)
	p.compileLarge(sets, parts)
	p.newMerged(sets)
	if len(toks) > 0 {
		// toks are in the order of foldCompare already.
		r.byAgent = make([]entry, len(toks))
		for k := range toks {
			r.byAgent[k] = entry{token: p.agents[toks[k].first], group: uint32(toks[k].set)}
		}
	}
	if global >= 0 {
		r.global = 1 + uint32(global)
	}
}
