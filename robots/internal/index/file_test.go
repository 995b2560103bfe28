package index

import "strings"

// buildTest compiles the rules of body, a robots.txt of user-agent,
// Allow and Disallow lines only (each "key: value"), as package robots
// would: a user-agent line after a rule starts a group, and every group
// names an agent. All its groups are taken as one merged group, whose
// parts it returns. With compiled set, every part is compiled.
func buildTest(body string, compiled bool) (*File, []uint32) {
	b := NewBuilder(body, compiled)
	first, rules, groups := 0, false, 0
	off := 0
	for num, line := range strings.SplitAfter(body, "\n") {
		key, value, _ := strings.Cut(strings.TrimRight(line, "\n"), ":")
		voff := off + len(key) + 1
		for len(value) > 0 && value[0] == ' ' {
			value, voff = value[1:], voff+1
		}
		off += len(line)
		switch strings.ToLower(key) {
		case "user-agent":
			if rules || groups == 0 {
				if groups > 0 {
					b.Group(first, b.NumRules(), true)
				}
				first, rules = b.NumRules(), false
				groups++
			}
		case "allow", "disallow":
			if groups > 0 {
				b.AddRule(key[0]|0x20 == 'a', voff, len(value), num+1)
				rules = true
			}
		}
	}
	if groups > 0 {
		b.Group(first, b.NumRules(), true)
	}
	b.Parts()
	all := make([]int, groups)
	gparts := make([]uint32, groups)
	for i := range all {
		all[i], gparts[i] = i, uint32(i)
	}
	b.CompileLarge([][]int{all})
	return b.Finish(nil), gparts
}
