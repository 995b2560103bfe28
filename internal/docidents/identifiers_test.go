package docidents

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIdentifiersResolve: every code identifier that docs/architecture.md
// names exists, in the file or package the page puts it in; every doc
// link and code-shaped name in a comment of the module's Go files exists;
// and a doc comment links the code it names (pkg.Name, Type.Method, a
// mixedCase name of its package) rather than giving it as plain text.
func TestIdentifiersResolve(t *testing.T) {
	r := &resolver{moduleIndex: loadModule(t, "../.."), std: stdNames()}
	for _, p := range r.commentProblems() {
		t.Error(p)
	}
	plain := r.plainNames()
	for _, p := range plain {
		t.Error(p)
	}
	if len(plain) > 0 {
		t.Log("DOCIDENTS_FIX=1 go test -run TestLinkPlainNames ./internal/docidents writes these as doc links")
	}
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.docProblems(string(doc)) {
		t.Errorf("docs/architecture.md: %s", p)
	}
}

// TestCheckerFindsStaleNames: the checks fail on names that do not exist,
// and on a name put in the wrong file.
func TestCheckerFindsStaleNames(t *testing.T) {
	r := &resolver{moduleIndex: loadModule(t, "../.."), std: stdNames()}
	sf := r.fileAt(t, "proxy/refuse.go")
	for _, text := range []string{
		"see [Server.settleNot]", "see [enforce.NoSuchThing]", "Server.noSuchMethod does it",
		"upstreamFailedNever runs first", "(enforce.Politeness.Admit)", "[*io.NoSuchWriter]",
	} {
		if len(r.lineProblems(sf, text)) == 0 {
			t.Errorf("comment %q: no problem found", text)
		}
	}
	for _, text := range []string{"see [Server.settle] and [enforce.Decision], [io.Writer]", "robots.txt at example.com (robots.max_redirects)"} {
		if p := r.lineProblems(sf, text); len(p) != 0 {
			t.Errorf("comment %q: %v", text, p)
		}
	}
	for _, doc := range []string{
		"`Server.settle` (`proxy/connect.go`)", "`enforce.Enforcer.NoSuch`", "| `pipeline.go` | `Server.settle` |",
		"`proxy/nosuch.go`", "`NoSuchType.Method`",
	} {
		if len(r.docProblems(doc)) == 0 {
			t.Errorf("doc %q: no problem found", doc)
		}
	}
	if p := r.docProblems("`Server.settle` (`proxy/refuse.go`), `settle` (`refuse.go`), `robots.ttl`"); len(p) != 0 {
		t.Errorf("correct doc: %v", p)
	}
}

func (r *resolver) fileAt(t *testing.T, rel string) *sourceFile {
	for _, sf := range r.files {
		if sf.rel == rel {
			return sf
		}
	}
	t.Fatalf("no file %s", rel)
	return nil
}

// span is one backticked span of a Markdown page.
type span struct {
	text       string
	start, end int // of the backticks
}

var (
	backticked = regexp.MustCompile("`([^`\n]+)`")
	// adjacent is what may stand between a name and the file or package
	// it is in: "`name` (`file.go`)", "`file.go` `name`", "(`name`, `file.go`)".
	adjacent = regexp.MustCompile(`^\s*[(,]?\s*$`)
	goFile   = regexp.MustCompile(`^[\w./-]*\w\.go$`)
	codeDir  = regexp.MustCompile(`^(cmd|proxy|enforce|robots|internal|scripts)(/|(/[\w.-]+)+/?)$`)
	ident    = regexp.MustCompile(`^\*?[A-Za-z_]\w*(\.[A-Za-z_]\w*){0,2}(\(\))?$`)
)

// headers are HTTP header names a page puts in backticks.
var headers = map[string]bool{"Accept": true, "Host": true, "Range": true, "Location": true}

// docProblems checks the code names of a Markdown page.
func (r *resolver) docProblems(doc string) []string {
	var spans []span
	for _, m := range backticked.FindAllStringSubmatchIndex(doc, -1) {
		spans = append(spans, span{doc[m[2]:m[3]], m[0], m[1]})
	}
	var out []string
	for _, s := range spans {
		if p := r.docName(s.text); p != "" {
			out = append(out, p)
		}
	}
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if !adjacent.MatchString(doc[a.end:b.start]) {
			continue
		}
		if p := r.placed(a.text, b.text); p != "" {
			out = append(out, p)
		} else if p := r.placed(b.text, a.text); p != "" {
			out = append(out, p)
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		out = append(out, r.rowProblems(line)...)
	}
	return out
}

// docName checks one backticked span: a file or directory exists; a code
// name exists in the module.
func (r *resolver) docName(t string) string {
	if goFile.MatchString(t) || codeDir.MatchString(t) {
		if len(r.dirsOf(t)) == 0 {
			return fmt.Sprintf("%s does not exist", t)
		}
		return ""
	}
	if !ident.MatchString(t) || headers[t] || strings.ToUpper(t) == t {
		return ""
	}
	name := strings.TrimSuffix(strings.TrimPrefix(t, "*"), "()")
	parts := strings.Split(name, ".")
	if pkgs := r.packagesNamed(nil, parts[0]); len(pkgs) > 0 && len(parts) > 1 {
		if strings.ToLower(name) == name {
			return "" // a setting: robots.ttl
		}
		for _, p := range pkgs {
			if p.has(strings.Join(parts[1:], "."), false) {
				return ""
			}
		}
		return fmt.Sprintf("%s: package %s has no %s", t, parts[0], strings.Join(parts[1:], "."))
	}
	if len(parts) == 3 || (strings.ToLower(name) == name && !strings.HasSuffix(t, "()") && len(parts) == 1) {
		return ""
	}
	for _, p := range r.byPath {
		if p.has(name, false) || (len(parts) == 1 && p.hasField(name)) {
			return ""
		}
	}
	if len(parts) == 2 && strings.ToLower(name) == name && !r.isType(parts[0]) {
		return "" // a setting: auth.allow_cidrs
	}
	return fmt.Sprintf("%s is not in the code", t)
}

func (r *resolver) isType(name string) bool {
	for _, p := range r.byPath {
		if _, ok := p.members[name]; ok {
			return true
		}
		if _, ok := p.decls[name]; ok && p.decls[name] != "" {
			if _, isType := p.embeds[name]; isType {
				return true
			}
		}
	}
	return false
}

// dirsOf returns the module directories where the file or directory
// where is: a path from the root, or a file name alone.
func (r *resolver) dirsOf(where string) []*pkgIndex {
	where = strings.TrimSuffix(where, "/")
	if !strings.HasSuffix(where, ".go") {
		if p := r.byPath[r.module+"/"+where]; p != nil {
			return []*pkgIndex{p}
		}
		return nil
	}
	var out []*pkgIndex
	for _, p := range r.byPath {
		dir, file := path.Split(where)
		if (dir == "" || strings.TrimSuffix(dir, "/") == p.dir) && fileExists(r.root, p.dir, file) {
			out = append(out, p)
		}
	}
	return out
}

func fileExists(root, dir, file string) bool {
	_, err := os.Stat(filepath.Join(root, dir, file))
	return err == nil
}

// placed checks a name written next to a file or package: the name is
// declared there. It returns "" when where is not a file or package, or
// name not a code name.
func (r *resolver) placed(where, name string) string {
	if !(goFile.MatchString(where) || codeDir.MatchString(where)) || !ident.MatchString(name) || headers[name] || goFile.MatchString(name) {
		return ""
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "*"), "()")
	for _, p := range r.dirsOf(where) {
		local := name
		if q, rest, ok := strings.Cut(name, "."); ok && q == p.name {
			local = rest
		}
		file, ok := p.decls[local]
		if !ok && !strings.Contains(local, ".") {
			file, ok = p.methodFile(local)
		}
		if ok && (!strings.HasSuffix(where, ".go") || file == path.Base(where)) {
			return ""
		}
	}
	return fmt.Sprintf("%s is not in %s", name, where)
}

// rowProblems checks a table row whose first cell is a file or package:
// every name the row gives that its package declares is declared in that
// file (or package).
func (r *resolver) rowProblems(line string) []string {
	cells := strings.Split(line, "|")
	if len(cells) < 3 || strings.TrimSpace(cells[0]) != "" {
		return nil
	}
	first := backticked.FindStringSubmatch(cells[1])
	if first == nil || !(goFile.MatchString(first[1]) || codeDir.MatchString(first[1])) {
		return nil
	}
	where := first[1]
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(strings.Join(cells[2:], "|"), -1) {
		name := strings.TrimSuffix(m[1], "()")
		if !ident.MatchString(name) || headers[name] {
			continue
		}
		if !r.declaredIn(where, name) {
			continue
		}
		if p := r.placed(where, name); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// declaredIn reports whether the package of where declares name
// (unqualified, or qualified by that package's name).
func (r *resolver) declaredIn(where, name string) bool {
	for _, p := range r.dirsOf(where) {
		if q, rest, ok := strings.Cut(name, "."); ok && q == p.name {
			name = rest
		}
		if _, ok := p.decls[name]; ok {
			return true
		}
		if _, ok := p.methodFile(name); ok && !strings.Contains(name, ".") {
			return true
		}
	}
	return false
}

// hasField reports whether some type of p has a field or method name.
func (p *pkgIndex) hasField(name string) bool {
	for _, ms := range p.members {
		if ms[name] {
			return true
		}
	}
	return false
}

// methodFile returns the file of a method name of some type of p.
func (p *pkgIndex) methodFile(name string) (string, bool) {
	for k, f := range p.decls {
		if strings.HasSuffix(k, "."+name) {
			return f, true
		}
	}
	return "", false
}
