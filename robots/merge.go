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

// buildParts sets r.written and returns the part of each group as written
// (nil for those that name no agent). The parts, and the agents of the
// groups, share one array each.
func (p *parser) buildParts() []*part {
	r := p.r
	n, nagents := 0, 0
	dedup := make([][]string, len(p.src))
	for i, sg := range p.src {
		if len(sg.agents) > 0 {
			dedup[i] = dedupFold(sg.agents)
			n, nagents = n+1, nagents+len(dedup[i])
		}
	}
	arr := make([]part, n)
	agents := make([]string, 0, nagents)
	parts := make([]*part, len(p.src))
	r.written = make([]written, 0, n)
	for i, sg := range p.src {
		if len(sg.agents) == 0 {
			continue // applies to no crawler
		}
		pt := &arr[len(r.written)]
		if p.compiled || !pt.initCompact(p.text, sg.rules) {
			*pt = *newPart(plainRules(sg.rules))
		}
		parts[i] = pt
		k := len(agents)
		agents = append(agents, dedup[i]...)
		r.written = append(r.written, written{agents: agents[k:len(agents):len(agents)], part: pt, delay: sg.delay})
	}
	return parts
}

// compileLarge compiles the compact parts of each set of groups whose
// compact parts together have more rules, or rules with a wildcard, than
// one compact part may: a decision tries all the parts of its merged
// group.
func (p *parser) compileLarge(sets [][]int, parts []*part) {
	for _, srcs := range sets {
		n, wild := 0, 0
		for _, s := range srcs {
			if pt := parts[s]; pt.crs != nil {
				n += len(pt.crs)
				for i := range pt.crs {
					if pt.crs[i].flags()&crWild != 0 {
						wild++
					}
				}
			}
		}
		if n <= compactMax && wild <= compactWild {
			continue
		}
		for _, s := range srcs {
			if pt := parts[s]; pt.crs != nil {
				*pt = *newPart(plainRules(p.src[s].rules))
			}
		}
	}
}

// newMerged returns the merged groups of sets (each a set of groups as
// written, of parts parts), with room for counts[i] agents each; their
// parts and agents share one array each.
func (p *parser) newMerged(sets [][]int, counts []int, parts []*part) []merged {
	ms := make([]merged, len(sets))
	nparts, nagents := 0, 0
	for i, srcs := range sets {
		nparts, nagents = nparts+len(srcs), nagents+counts[i]
	}
	allParts, allAgents := make([]*part, 0, nparts), make([]string, nagents)
	for i, srcs := range sets {
		g := &ms[i]
		k := len(allParts)
		for _, s := range srcs {
			allParts = append(allParts, parts[s])
			if sg := p.src[s]; sg.hasDelay && sg.delay > g.delay {
				g.delay = sg.delay
			}
		}
		g.parts = allParts[k:len(allParts):len(allParts)]
		g.agents, allAgents = allAgents[:0:counts[i]], allAgents[counts[i]:]
		g.usage = p.groupUsage(srcs)
	}
	return ms
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
func (p *parser) merge(order []string, toks map[string]*tokInfo, globalSrcs []int, parts []*part) {
	r := p.r
	bySet := map[string]int{}
	var sets [][]int
	var counts []int
	which := make([]int, 0, len(order)+1) // the set of each token, then of "*"
	add := func(srcs []int) {
		k := setKey(srcs)
		i, ok := bySet[k]
		if !ok {
			i = len(sets)
			bySet[k] = i
			sets, counts = append(sets, srcs), append(counts, 0)
		}
		counts[i]++
		which = append(which, i)
	}
	for _, k := range order {
		add(toks[k].srcs)
	}
	if len(globalSrcs) > 0 {
		add(globalSrcs)
	}
	p.compileLarge(sets, parts)
	ms := p.newMerged(sets, counts, parts)
	if len(order) > 0 {
		r.byAgent = make([]entry, 0, len(order))
	}
	for j, k := range order {
		g, tok := &ms[which[j]], toks[k].token
		g.agents = append(g.agents, tok)
		r.byAgent = append(r.byAgent, entry{token: tok, group: g})
	}
	sort.Slice(r.byAgent, func(i, j int) bool { return foldCompare(r.byAgent[i].token, r.byAgent[j].token) < 0 })
	if len(globalSrcs) > 0 {
		r.global = &ms[which[len(order)]]
		r.global.agents = append(r.global.agents, "*")
	}
	// In order of their first group as written.
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sets[idx[a]][0] < sets[idx[b]][0] })
	r.groups = make([]*merged, len(ms))
	for n, i := range idx {
		r.groups[n] = &ms[i]
	}
}
