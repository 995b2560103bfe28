package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// suggestKey returns " (did you mean ...?)" for the unknown YAML key k
// in the section prefix ("" or "robots." etc.): the closest key of that
// section by edit distance (case and - for _ count as near misses), else
// the option elsewhere whose last part is k ("ttl" at the top: robots.ttl);
// "" when nothing is close.
func suggestKey(prefix, k string) string {
	best, bestDist := "", len(k)/3+2 // at most a third of the key wrong, and at least 2 edits allowed
	seen := map[string]bool{}
	for _, o := range options() {
		if !strings.HasPrefix(o.key, prefix) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(o.key, prefix), ".")
		if seen[name] {
			continue
		}
		seen[name] = true
		if d := keyDistance(k, name); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return " (did you mean " + `"` + best + `"?)`
	}
	for _, o := range options() {
		if i := strings.LastIndexByte(o.key, '.'); i >= 0 && strings.EqualFold(o.key[i+1:], k) && !strings.HasPrefix(o.key, prefix+k) {
			return " (did you mean " + o.key + ", i.e. " + yamlPath(o.key) + "?)"
		}
	}
	return ""
}

// suggestNested is [suggestKey] for the unknown key k of the section prefix
// whose value is v: a mapping whose keys, joined to k by '_', name a
// setting is suggested as that setting ("admin: {hosts: ...}" is
// admin_hosts).
func suggestNested(prefix, k string, v *yaml.Node) string {
	if v != nil && v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			if key := prefix + k + "_" + v.Content[i].Value; v.Content[i].Value != "" {
				if _, ok := optionByKey(key); ok {
					return " (did you mean " + strconv.Quote(key) + "?)"
				}
			}
		}
	}
	return suggestKey(prefix, k)
}

// yamlPath shows the dotted key as nested YAML: "robots: {ttl: ...}".
func yamlPath(key string) string {
	parts := strings.Split(key, ".")
	s := parts[len(parts)-1] + ": ..."
	for i := len(parts) - 2; i >= 0; i-- {
		s = parts[i] + ": {" + s + "}"
	}
	return s
}

// keyDistance is the edit distance between a and b, compared in lower
// case with - read as _.
func keyDistance(a, b string) int {
	norm := func(s string) []rune { return []rune(strings.ReplaceAll(strings.ToLower(s), "-", "_")) }
	x, y := norm(a), norm(b)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// Suggest returns " (did you mean "c"?)" for the candidate c closest to
// word by the edit distance of keys (case and - for _ are near misses),
// "" when none is close: for mistyped flags and values, as [suggestKey]
// does for YAML keys.
func Suggest(word string, candidates []string) string {
	if best := closest(word, candidates); best != "" {
		return ` (did you mean "` + best + `"?)`
	}
	return ""
}

// closest returns the candidate nearest to word, "" when none is close.
func closest(word string, candidates []string) string {
	best, bestDist := "", len(word)/3+2
	for _, c := range candidates {
		if d := keyDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// FlagHint returns err, the error of parsing the flags of fs, with " (did you mean
// -name?)" when it is about a flag fs does not define and fs defines a
// close one.
func FlagHint(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best := closest(strings.TrimPrefix(name, "-"), names); best != "" {
		return fmt.Errorf("%w (did you mean -%s?)", err, best)
	}
	return err
}
