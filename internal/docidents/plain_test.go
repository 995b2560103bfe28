package docidents

import (
	"cmp"
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docComment is a doc comment and the name of what it documents ("" for
// a package's).
type docComment struct {
	cg   *ast.CommentGroup
	name string
}

// docComments returns the doc comments of sf: the package's, and those of
// its declarations, specs and fields.
func docComments(sf *sourceFile) []docComment {
	var out []docComment
	add := func(cg *ast.CommentGroup, names ...*ast.Ident) {
		if cg == nil {
			return
		}
		name := ""
		if len(names) > 0 {
			name = names[0].Name
		}
		out = append(out, docComment{cg, name})
	}
	ast.Inspect(sf.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.File:
			add(n.Doc)
		case *ast.FuncDecl:
			add(n.Doc, n.Name)
		case *ast.GenDecl:
			if len(n.Specs) == 1 {
				switch s := n.Specs[0].(type) {
				case *ast.TypeSpec:
					add(n.Doc, s.Name)
				case *ast.ValueSpec:
					add(n.Doc, s.Names...)
				}
			} else {
				add(n.Doc)
			}
		case *ast.TypeSpec:
			add(n.Doc, n.Name)
		case *ast.ValueSpec:
			add(n.Doc, n.Names...)
		case *ast.Field:
			add(n.Doc, n.Names...)
		}
		return true
	})
	return out
}

// plainName is a name a doc comment gives as plain text where a Go doc
// link would resolve, and the comment does not link it elsewhere.
type plainName struct {
	file      string
	line, col int // col: byte offset in the line, from 0
	name      string
}

func (p plainName) String() string {
	return fmt.Sprintf("%s:%d:%d: %s is code: write it as a doc link [%s]", p.file, p.line, p.col+1, p.name, p.name)
}

// plainNames returns, for the doc comments of the module's non-test files,
// the first plain occurrence of each name a doc link would resolve
// (pkg.Name, Type.Method, a mixedCase name the package declares) that the
// comment does not link; the name a comment documents is left alone.
func (r *resolver) plainNames() []plainName {
	var out []plainName
	for _, sf := range r.files {
		if sf.test {
			continue
		}
		for _, dc := range docComments(sf) {
			linked := map[string]bool{dc.name: true}
			var found []plainName
			for _, c := range dc.cg.List {
				if !strings.HasPrefix(c.Text, "//") {
					continue
				}
				pos := sf.fset.Position(c.Pos())
				text := commentLines(c.Text)[0]
				for _, m := range docLink.FindAllStringSubmatch(blank(quoted, text), -1) {
					linked[strings.TrimPrefix(m[1], "*")] = true
				}
				for _, n := range r.plainInLine(sf, text) {
					found = append(found, plainName{sf.rel, pos.Line, pos.Column - 1 + 2 + n.col, n.name})
				}
			}
			for _, p := range found {
				if !linked[p.name] {
					linked[p.name] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// plainInLine returns the names of one line of a doc comment that a doc
// link would resolve, with their offsets.
func (r *resolver) plainInLine(sf *sourceFile, text string) []plainName {
	prose := blank(docLinkSpan, blank(quoted, text))
	var out []plainName
	for _, m := range dotted.FindAllStringSubmatchIndex(prose, -1) {
		name := prose[m[2]:m[3]]
		if m[3] < len(prose)-1 && prose[m[3]] == '.' && isWord(prose[m[3]+1]) {
			continue
		}
		if m[1] > m[3] || (m[3] < len(prose) && prose[m[3]] == '(') {
			continue // a call, code rather than a name: time.After(d)
		}
		if ok, checked := r.qualified(sf, name); ok && checked && r.link(sf, name) {
			out = append(out, plainName{col: m[2], name: name})
		}
	}
	for _, m := range mixedCase.FindAllStringSubmatchIndex(prose, -1) {
		word := prose[m[2]:m[3]]
		if strings.HasSuffix(word, "()") || (m[3] < len(prose) && prose[m[3]] == '(') ||
			(m[3] < len(prose) && prose[m[3]] == '.' && m[3]+1 < len(prose) && isWord(prose[m[3]+1])) {
			continue
		}
		if _, ok := sf.pkg.decls[word]; ok {
			out = append(out, plainName{col: m[2], name: word})
		}
	}
	return out
}

// TestLinkPlainNames, with DOCIDENTS_FIX=1, writes the names that
// doc comments give as plain text where a doc link would resolve as doc
// links, in the files (TestIdentifiersResolve fails on them).
func TestLinkPlainNames(t *testing.T) {
	if os.Getenv("DOCIDENTS_FIX") == "" {
		t.Skip("set DOCIDENTS_FIX=1 to turn the names doc comments give as plain text into doc links")
	}
	r := &resolver{moduleIndex: loadModule(t, "../.."), std: stdNames()}
	byFile := map[string][]plainName{}
	for _, p := range r.plainNames() {
		byFile[p.file] = append(byFile[p.file], p)
	}
	for file, ps := range byFile {
		name := filepath.Join(r.root, file)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		slices.SortFunc(ps, func(a, b plainName) int { return cmp.Or(b.line-a.line, b.col-a.col) })
		for _, p := range ps {
			l := lines[p.line-1]
			if !strings.HasPrefix(l[p.col:], p.name) {
				t.Fatalf("%v: the file changed under the test", p)
			}
			lines[p.line-1] = l[:p.col] + "[" + p.name + "]" + l[p.col+len(p.name):]
		}
		if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d doc links", file, len(ps))
	}
}
