package robots

import (
	"sort"
	"strconv"
	"strings"
)

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
	dedup := make([][]span, len(p.src))
	for i, sg := range p.src {
		if len(sg.agents) > 0 {
			dedup[i] = r.dedupFold(sg.agents)
			n, nagents = n+1, nagents+len(dedup[i])
			if !p.compiled && len(sg.rules) <= compactMax {
				nrecs += numRecords(sg.rules)
			}
		}
	}
	r.written = make([]written, n)
	r.agents = make([]span, 0, nagents)
	r.crs = make([]crule, 0, nrecs)
	parts := make([]*part, len(p.src))
	k := 0
	for i, sg := range p.src {
		if len(sg.agents) == 0 {
			continue // applies to no crawler
		}
		w := &r.written[k]
		k++
		if p.compiled || !p.initCompact(&w.part, sg.rules) {
			w.part = *newPart(plainRules(sg.rules))
		}
		parts[i] = &w.part
		w.agents[0] = uint32(len(r.agents))
		r.agents = append(r.agents, dedup[i]...)
		w.agents[1], w.delay = uint32(len(r.agents)), sg.delay
	}
	return parts
}

// numRecords returns the number of records of a compact part of rs: one a
// rule, and one more for the directory of an Allow of ".../index.htm...".
func numRecords(rs []compactRule) int {
	n := len(rs)
	for _, r := range rs {
		if j := lastSlash(r.Pattern); r.Allow && j >= 0 && hasPrefix(r.Pattern[j:], "/index.htm") {
			n++
		}
	}
	return n
}

// compileLarge compiles the compact parts of each set of groups whose
// compact parts together have more rules, or rules with a wildcard, than
// one compact part may: a decision tries all the parts of its merged
// group. The records of the compact parts left are then packed into an
// array of their size.
func (p *parser) compileLarge(sets [][]int, parts []*part) {
	r := p.r
	for _, srcs := range sets {
		n, wild := 0, 0
		for _, s := range srcs {
			if pt := parts[s]; pt.compact() {
				n += int(pt.to - pt.from)
				for _, c := range r.crs[pt.from:pt.to] {
					if c.flags()&crWild != 0 {
						wild++
					}
				}
			}
		}
		if n <= compactMax && wild <= compactWild {
			continue
		}
		for _, s := range srcs {
			if pt := parts[s]; pt.compact() {
				*pt = *newPart(plainRules(p.src[s].rules))
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

// newMerged sets r.groups and r.gparts to the merged groups of sets (each
// a set of groups as written, of parts parts), their parts the indexes
// into r.written of parts.
func (p *parser) newMerged(sets [][]int, parts []*part) {
	r := p.r
	r.groups = make([]merged, len(sets))
	nparts := 0
	for _, srcs := range sets {
		nparts += len(srcs)
	}
	// The index into r.written of each group as written that names an
	// agent.
	wi := make([]uint32, len(p.src))
	k := uint32(0)
	for i := range parts {
		if parts[i] != nil {
			wi[i], k = k, k+1
		}
	}
	r.gparts = make([]uint32, 0, nparts)
	for i, srcs := range sets {
		g := &r.groups[i]
		g.from = uint32(len(r.gparts))
		for _, s := range srcs {
			r.gparts = append(r.gparts, wi[s])
			if sg := p.src[s]; sg.hasDelay && sg.delay > g.delay {
				g.delay = sg.delay
			}
		}
		g.to = uint32(len(r.gparts))
		g.usage = p.groupUsage(srcs)
	}
}

// setKey returns a key naming the set of groups srcs.
func setKey(srcs []int) string {
	var sb strings.Builder
	for _, s := range srcs {
		sb.WriteString(strconv.Itoa(s))
		sb.WriteByte(',')
	}
	return sb.String()
}

// merge sets the merged groups of r, its agent index and its global
// group: tokens naming the same set of groups share one merged group.
// The merged groups are in order of their first group as written.
func (p *parser) merge(order []string, toks map[string]*tokInfo, globalSrcs []int, parts []*part) {
	r := p.r
	bySet := map[string]int{}
	var sets [][]int
	which := make([]int, 0, len(order)+1) // the set of each token, then of "*"
	add := func(srcs []int) {
		k := setKey(srcs)
		i, ok := bySet[k]
		if !ok {
			i = len(sets)
			bySet[k] = i
			sets = append(sets, srcs)
		}
		which = append(which, i)
	}
	for _, k := range order {
		add(toks[k].srcs)
	}
	if len(globalSrcs) > 0 {
		add(globalSrcs)
	}
	p.compileLarge(sets, parts)
	// pos[i] is the place of set i in order of first group as written.
	idx := make([]int, len(sets))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sets[idx[a]][0] < sets[idx[b]][0] })
	sorted, pos := make([][]int, len(sets)), make([]uint32, len(sets))
	for n, i := range idx {
		sorted[n], pos[i] = sets[i], uint32(n)
	}
	p.newMerged(sorted, parts)
	if len(order) > 0 {
		r.byAgent = make([]entry, 0, len(order))
	}
	for j, k := range order {
		r.byAgent = append(r.byAgent, entry{token: toks[k].token, group: pos[which[j]]})
	}
	sort.Slice(r.byAgent, func(i, j int) bool {
		return foldCompare(r.str(r.byAgent[i].token), r.str(r.byAgent[j].token)) < 0
	})
	if len(globalSrcs) > 0 {
		r.global = 1 + pos[which[len(order)]]
	}
}
