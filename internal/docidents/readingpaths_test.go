package docidents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readingPathItem is a "1. `file`: `Func`, `Type.Method`" line of a
// reading path of docs/architecture.md.
var readingPathItem = regexp.MustCompile("^\\d+\\. `([^`]+)`: (.+)$")

// readingPaths returns the reading paths of doc, by name: the list items
// between "<!-- reading path: NAME -->" and "<!-- end reading path -->",
// each a file and the functions named beside it.
func readingPaths(t *testing.T, doc string) map[string][][]string {
	t.Helper()
	paths := make(map[string][][]string)
	name := ""
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "<!-- reading path: "):
			name = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- reading path: "), " -->")
			paths[name] = nil
		case line == "<!-- end reading path -->":
			name = ""
		case name != "" && strings.TrimSpace(line) != "":
			m := readingPathItem.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("reading path %s: %q is not \"N. `file`: `function`, ...\"", name, line)
				continue
			}
			item := []string{m[1]}
			for _, f := range strings.Split(m[2], ", ") {
				item = append(item, strings.Trim(f, "`"))
			}
			paths[name] = append(paths[name], item)
		}
	}
	return paths
}

// declaredFuncs returns the functions the Go file at path declares:
// "Name" for a function, "Type.Name" for a method.
func declaredFuncs(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	funcs := make(map[string]bool)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		funcs[name] = true
	}
	return funcs, nil
}

// TestReadingPaths: the two reading paths of docs/architecture.md are
// there, a plain-HTTP 403 in at most five files and a transparent HTTPS
// refusal in at most eight, and each listed file exists and defines
// every function named beside it.
func TestReadingPaths(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := readingPaths(t, string(doc))
	for _, tc := range []struct {
		name     string
		maxFiles int
	}{
		{"plain-http-403", 5},
		{"transparent-https", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := paths[tc.name]
			if len(items) == 0 || len(items) > tc.maxFiles {
				t.Fatalf("reading path %s lists %d files, want 1 to %d", tc.name, len(items), tc.maxFiles)
			}
			for _, item := range items {
				funcs, err := declaredFuncs(filepath.Join("../..", item[0]))
				if err != nil {
					t.Errorf("%s: %v", item[0], err)
					continue
				}
				for _, fn := range item[1:] {
					if !funcs[fn] {
						t.Errorf("%s does not define %s", item[0], fn)
					}
				}
			}
		})
	}
}
