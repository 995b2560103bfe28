package docidents

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFilePointers: a comment that sends the reader to a file, "(x.go)",
// sends them where the code is. After a code name ("Server.settle
// (refuse.go)"), the file declares that name; at the end of a line of
// code ("readmit{}, // ... (readmit.go)"), the file declares a name the
// line uses. And the file table of docs/architecture.md lists every
// non-test file of proxy/, and only those.
func TestFilePointers(t *testing.T) {
	r := &resolver{moduleIndex: loadModule(t, "../.."), std: stdNames()}
	for _, p := range r.pointerProblems(t) {
		t.Error(p)
	}
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fileTableProblems(string(doc), "proxy", goFiles(t, "../../proxy")) {
		t.Errorf("docs/architecture.md: %s", p)
	}
}

// TestPointerCheckerFindsStale: the checks fail on a pointer to the wrong
// file and on a file table that misses a file or lists one too many.
func TestPointerCheckerFindsStale(t *testing.T) {
	r := &resolver{moduleIndex: loadModule(t, "../.."), std: stdNames()}
	sf := r.fileAt(t, "proxy/pipeline.go")
	if p := r.namePointers(sf, "carried out by Server.settle (proxy.go)"); len(p) == 0 {
		t.Error("Server.settle (proxy.go): no problem found")
	}
	if p := r.namePointers(sf, "carried out by Server.settle (refuse.go), a round tripper (forward.go)"); len(p) != 0 {
		t.Errorf("correct pointers: %v", p)
	}
	if r.linePointer(sf, "\tresp, err := s.roundTrip(req)", "proxy.go") == "" {
		t.Error("s.roundTrip (proxy.go): no problem found")
	}
	if p := r.linePointer(sf, "\tresp, err := s.roundTrip(req)", "transport.go"); p != "" {
		t.Errorf("correct line pointer: %s", p)
	}
	table := "### The root `proxy/` package\n\n| file | what |\n| --- | --- |\n| `a.go` | A |\n| `b.go` | B |\n\n## Next\n"
	if p := fileTableProblems(table, "proxy", []string{"a.go", "c.go"}); len(p) != 2 {
		t.Errorf("file table: %v, want b.go listed and c.go missing", p)
	}
}

// pointer is a file pointer in a comment, and the name just before it.
var pointer = regexp.MustCompile(`(?:\[?\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\]?(?:\(\))? )?\(([\w]+\.go)[,:;)]`)

// pointerProblems checks the file pointers of every comment of the
// module's non-test Go files.
func (r *resolver) pointerProblems(t *testing.T) []string {
	var out []string
	for _, sf := range r.files {
		if sf.test {
			continue
		}
		src, err := os.ReadFile(filepath.Join(r.root, sf.rel))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for _, cg := range sf.file.Comments {
			for _, c := range cg.List {
				pos := sf.fset.Position(c.Pos())
				for _, p := range r.namePointers(sf, c.Text) {
					out = append(out, fmt.Sprintf("%s:%d: %s", sf.rel, pos.Line, p))
				}
				code := lines[pos.Line-1][:pos.Column-1]
				if strings.TrimSpace(code) == "" {
					continue
				}
				for _, m := range pointer.FindAllStringSubmatch(c.Text, -1) {
					if m[1] != "" {
						continue // checked by namePointers
					}
					if p := r.linePointer(sf, code, m[2]); p != "" {
						out = append(out, fmt.Sprintf("%s:%d: %s", sf.rel, pos.Line, p))
					}
				}
			}
		}
	}
	return out
}

// namePointers checks "name (x.go)" in text: when sf's package declares
// name, x.go does.
func (r *resolver) namePointers(sf *sourceFile, text string) []string {
	var out []string
	for _, m := range pointer.FindAllStringSubmatch(text, -1) {
		name, file := m[1], m[2]
		if q, rest, ok := strings.Cut(name, "."); ok && q == sf.pkg.name {
			name = rest
		}
		if name == "" || !codeShaped(m[0]) || !declared(sf.pkg, name) {
			continue // prose ("the tunnel (tunnelsplice.go)")
		}
		if !declaredInFile(sf.pkg, name, file) {
			out = append(out, fmt.Sprintf("%s is not in %s", m[1], file))
		}
	}
	return out
}

// linePointer checks the pointer to file at the end of the line of code:
// file, in sf's directory, declares a name the line uses.
func (r *resolver) linePointer(sf *sourceFile, code, file string) string {
	if !fileExists(r.root, sf.pkg.dir, file) {
		return fmt.Sprintf("no file %s in %s", file, sf.pkg.dir)
	}
	for _, id := range regexp.MustCompile(`[A-Za-z_]\w*`).FindAllString(code, -1) {
		if declaredInFile(sf.pkg, id, file) {
			return ""
		}
	}
	return fmt.Sprintf("%s declares nothing of %q", file, strings.TrimSpace(code))
}

// codeShaped reports whether the name of a pointer match is written as
// code: qualified, a doc link, a call, or mixedCase.
func codeShaped(match string) bool {
	name, _, _ := strings.Cut(match, " (")
	return strings.ContainsAny(name, ".[") || strings.HasSuffix(name, "()") || regexp.MustCompile(`^[a-z]+[A-Z]`).MatchString(name)
}

// declared reports whether p declares name: a top-level name, Type.Method,
// or a method name alone.
func declared(p *pkgIndex, name string) bool {
	if _, ok := p.decls[name]; ok {
		return true
	}
	_, ok := p.methodFile(name)
	return ok && !strings.Contains(name, ".")
}

// declaredInFile reports whether file of p declares name (a top-level
// name, Type.Method, or the method name of some type).
func declaredInFile(p *pkgIndex, name, file string) bool {
	if p.decls[name] == file {
		return true
	}
	for k, f := range p.decls {
		if f == file && strings.HasSuffix(k, "."+name) {
			return true
		}
	}
	return false
}

// goFiles returns the non-test Go files of dir.
func goFiles(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, n)
		}
	}
	return out
}

// fileTableProblems compares the file table of the section "The root
// `dir/` package" of doc with files.
func fileTableProblems(doc, dir string, files []string) []string {
	_, section, ok := strings.Cut(doc, "### The root `"+dir+"/` package")
	if !ok {
		return []string{"no section for " + dir + "/"}
	}
	section, _, _ = strings.Cut(section, "\n#")
	var listed []string
	for _, line := range strings.Split(section, "\n") {
		if m := regexp.MustCompile("^\\| `([\\w]+\\.go)` \\|").FindStringSubmatch(line); m != nil {
			listed = append(listed, m[1])
		}
	}
	var out []string
	for _, f := range files {
		if !slices.Contains(listed, f) {
			out = append(out, fmt.Sprintf("the file table lacks %s", path.Join(dir, f)))
		}
	}
	for _, f := range listed {
		if !slices.Contains(files, f) {
			out = append(out, fmt.Sprintf("the file table lists %s, which is not a file", path.Join(dir, f)))
		}
	}
	return out
}
