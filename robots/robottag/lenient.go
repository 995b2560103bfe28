package robottag

import "strings"

// Reading robot-tag lists that stray from the comma-separated grammar
// the way the strictest crawler would: a value that names a directive
// counts, however it is punctuated. "noindex; nofollow", "\"noindex\""
// and "nofollow noindex" all say noindex; reading them as one unknown
// directive would let a page its site marked "do not keep" through.

// splitList splits a robot-tag list into its elements: at commas, the
// grammar's separator, and at semicolons, which sites write for it.
func splitList(list string) []string {
	return strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ';' })
}

// unquote removes the quotes ('"' and '\”) of a list element: no
// directive, agent or value of the vocabulary holds one.
func unquote(tok string) string {
	if !strings.ContainsAny(tok, `"'`) {
		return tok
	}
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' {
			return -1
		}
		return r
	}, tok)
}

// appendWords appends d to ds, or, when d's name is not a directive this
// package knows but is made of several words (separated by white space
// or any other character a name cannot hold), the known directives among
// those words, in order, with d's agent; d's value goes to its last word
// when that word is known. A name none of whose words is known is
// appended as it is.
func appendWords(ds []Directive, d Directive) []Directive {
	if isKnownDirective(d.Name) || !strings.ContainsFunc(d.Name, notNameChar) {
		return append(ds, d)
	}
	words := strings.FieldsFunc(d.Name, notNameChar)
	n := len(ds)
	for i, w := range words {
		if !isKnownDirective(w) {
			continue
		}
		e := Directive{Agent: d.Agent, Name: w}
		if i == len(words)-1 {
			e.Value = d.Value
		}
		ds = append(ds, e)
	}
	if len(ds) == n {
		return append(ds, d)
	}
	return ds
}

// notNameChar reports whether r cannot stand in a directive's name
// (lower case): anything but letters, digits, '_' and '-'.
func notNameChar(r rune) bool {
	return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || r == '-')
}
