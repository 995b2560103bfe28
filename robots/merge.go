package robots

// How the groups as written become the groups decisions use: each group
// as written gets its part of the compiled rules, and the agents that
// name the same set of groups share one merged group. The parts, the
// merged groups and their agents live in a few arrays per file rather
// than in one allocation each.

// buildParts sets r.written and r.agents, and has p.b build the part of
// each group as written that names an agent.
func (p *parser) buildParts() {
	r := p.r
	n, nagents := 0, 0
	for i := range p.src {
		g := &p.src[i]
		from, to := g.agentRange()
		p.b.Group(int(g.rules[0]), int(g.rules[1]), from != to)
		if from == to {
			continue // applies to no crawler
		}
		n++
		for _, a := range p.agents[from:to] {
			if a != dupAgent {
				nagents++
			}
		}
	}
	p.b.Parts()
	r.written = make([]written, n)
	r.agents = make([]span, 0, nagents)
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
		w.agents[0] = uint32(len(r.agents))
		for _, a := range p.agents[from:to] {
			if a != dupAgent {
				r.agents = append(r.agents, a)
			}
		}
		w.agents[1], w.delay = uint32(len(r.agents)), g.delay
	}
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
func (p *parser) merge(toks []token, lists, globalSrcs []int) {
	r := p.r
	sets, global := p.groupSets(toks, lists, globalSrcs)
	p.b.CompileLarge(sets)
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
