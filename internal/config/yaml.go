package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// decodeYAML sets the options that the YAML document b names, strictly:
// an unknown or repeated key is an error naming it and its line, and a
// value is parsed exactly as the same value given as a flag. All
// problems are reported, joined into one line.
func decodeYAML(cfg *Config, b []byte) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			cfg.emptyFile = true // no document: empty, or only comments
			return nil
		}
		return errors.New(yamlError(err))
	}
	var errs []string
	if len(doc.Content) == 0 || isNull(doc.Content[0]) || doc.Content[0].Kind == yaml.MappingNode && len(doc.Content[0].Content) == 0 {
		cfg.emptyFile = true
	} else {
		decodeMapping(cfg, doc.Content[0], "", &errs)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// decodeMapping sets the options of the mapping n, whose keys are under
// prefix ("" or "robots." etc.), appending problems to errs.
func decodeMapping(cfg *Config, n *yaml.Node, prefix string, errs *[]string) {
	n = unalias(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fmt.Sprintf("line %d: %s is not a mapping of keys", n.Line, strings.TrimSuffix(prefix, ".")))
		return
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if seen[key] {
			*errs = append(*errs, fmt.Sprintf("line %d: key %q repeated", k.Line, k.Value))
			continue
		}
		seen[key] = true
		if o, ok := optionByKey(key); ok {
			if err := decodeValue(cfg, o, v); err != nil {
				*errs = append(*errs, fmt.Sprintf("line %d: %s", v.Line, err))
			}
		} else if isSection(key) {
			decodeMapping(cfg, v, key+".", errs)
		} else {
			*errs = append(*errs, fmt.Sprintf("line %d: unknown key %q%s", k.Line, k.Value, suggestNested(prefix, k.Value, v)))
		}
	}
}

// isSection reports whether key is a section holding options
// ("robots" for "robots.ttl").
func isSection(key string) bool {
	for _, o := range options() {
		if strings.HasPrefix(o.key, key+".") {
			return true
		}
	}
	return false
}

// decodeValue sets option o from the YAML value n. The error starts with
// the key (with the index of a bad list item).
func decodeValue(cfg *Config, o option, n *yaml.Node) error {
	n = unalias(n)
	if p, ok := o.field(cfg).(*[]Site); ok { // a list of mappings (sites.go)
		sites, err := decodeSites(n)
		*p = sites
		return err
	}
	if p, ok := o.field(cfg).(*[]payment.Budget); ok { // a list of mappings (payment.go)
		budgets, err := decodeBudgets(n)
		*p = budgets
		return err
	}
	if isNull(n) && !o.isList() {
		return nil // "key:" with no value keeps the default
	}
	var err error
	switch {
	case o.isList() && isNull(n):
		err = o.set(cfg, "", []string{})
	case o.isList() && n.Kind == yaml.SequenceNode:
		items := make([]string, 0, len(n.Content))
		for _, it := range n.Content {
			if it = unalias(it); it.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: line %d: want a single value in the list", o.key, it.Line)
			}
			items = append(items, it.Value)
		}
		err = o.set(cfg, "", items)
	case o.isList():
		return fmt.Errorf("%s: want a list, e.g. [a, b]", o.key)
	case n.Kind != yaml.ScalarNode:
		return fmt.Errorf("%s: want a single value, not a list or mapping", o.key)
	default:
		err = o.set(cfg, yaml11Bool(o, n.Value), nil)
	}
	if ie := (*itemError)(nil); errors.As(err, &ie) {
		return fmt.Errorf("%s[%d]: %w", o.key, ie.index, ie.err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.key, err)
	}
	return nil
}

// yaml11Bool maps YAML 1.1's boolean words (yes, no, on, off), which
// YAML decoders commonly accept, to true and false for a boolean option.
func yaml11Bool(o option, v string) string {
	if !o.isBool() {
		return v
	}
	switch strings.ToLower(v) {
	case "yes", "y", "on":
		return "true"
	case "no", "n", "off":
		return "false"
	}
	return v
}

// unalias returns the node an alias stands for.
func unalias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is YAML's null ("key:", "~", "null").
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

var yamlSpaces = regexp.MustCompile(`\s*\n\s*`)

// yamlError turns a (possibly multi-line) YAML syntax error into one line.
func yamlError(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	return yamlSpaces.ReplaceAllString(strings.TrimSpace(s), "; ")
}
