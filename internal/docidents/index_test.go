package docidents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pkgIndex is what one package (one directory) declares.
type pkgIndex struct {
	dir, name, path string
	decls           map[string]string          // top-level name, or Type.Method, -> its file (base name); non-test files
	testDecls       map[string]bool            // the same, declared in the package's test files
	members         map[string]map[string]bool // type -> its fields and methods
	embeds          map[string][]string        // type -> its embedded types ("T" or "pkg.T")
	idents          map[string]bool            // every identifier in the package's code, tests included
}

// moduleIndex is every package of the module, and the exported names of
// the packages outside it that a comment names, looked up when needed.
type moduleIndex struct {
	root, module string
	byPath       map[string]*pkgIndex // import path -> package
	byName       map[string][]*pkgIndex
	idents       map[string]bool // every identifier in the module's code
	external     map[string]*pkgIndex
	files        []*sourceFile
}

// sourceFile is one parsed Go file of the module.
type sourceFile struct {
	rel     string // path from the module root
	test    bool
	pkg     *pkgIndex
	fset    *token.FileSet
	file    *ast.File
	imports map[string]string // local name -> import path
}

// loadModule parses every Go file under root (testdata and hidden
// directories left out).
func loadModule(t *testing.T, root string) *moduleIndex {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := &moduleIndex{root: root, byPath: map[string]*pkgIndex{}, byName: map[string][]*pkgIndex{},
		idents: map[string]bool{}, external: map[string]*pkgIndex{}}
	for _, line := range strings.Split(string(gomod), "\n") {
		if mod, ok := strings.CutPrefix(line, "module "); ok {
			m.module = strings.TrimSpace(mod)
		}
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		return m.addFile(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *moduleIndex) addFile(p string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(m.root, p)
	dir := filepath.ToSlash(filepath.Dir(rel))
	ipath := m.module
	if dir != "." {
		ipath += "/" + dir
	}
	pkg := m.byPath[ipath]
	if pkg == nil {
		pkg = newPkgIndex(dir, ipath)
		m.byPath[ipath] = pkg
	}
	test := strings.HasSuffix(p, "_test.go")
	if !test || pkg.name == "" {
		if name := strings.TrimSuffix(f.Name.Name, "_test"); !test || name == f.Name.Name {
			if pkg.name == "" {
				m.byName[name] = append(m.byName[name], pkg)
			}
			pkg.name = name
		}
	}
	sf := &sourceFile{rel: filepath.ToSlash(rel), test: test, pkg: pkg, fset: fset, file: f, imports: importsOf(f)}
	m.files = append(m.files, sf)
	pkg.add(f, filepath.Base(p), test)
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			pkg.idents[id.Name] = true
			m.idents[id.Name] = true
		}
		return true
	})
	return nil
}

func newPkgIndex(dir, ipath string) *pkgIndex {
	return &pkgIndex{dir: dir, path: ipath, decls: map[string]string{}, testDecls: map[string]bool{},
		members: map[string]map[string]bool{}, embeds: map[string][]string{}, idents: map[string]bool{}}
}

// importsOf maps f's import names to their paths (the name assumed is the
// path's last element, without a "go-" prefix or ".vN" suffix).
func importsOf(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" {
			name = path.Base(path.Dir(p))
		}
		name = strings.TrimPrefix(strings.Split(name, ".")[0], "go-")
		if is.Name != nil {
			name = is.Name.Name
		}
		out[name] = p
	}
	return out
}

// add records the declarations of f, a file named file.
func (p *pkgIndex) add(f *ast.File, file string, test bool) {
	decl := func(name string) {
		if test {
			p.testDecls[name] = true
		} else if _, ok := p.decls[name]; !ok {
			p.decls[name] = file
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				decl(d.Name.Name)
				continue
			}
			recv := recvName(d.Recv.List[0].Type)
			decl(recv + "." + d.Name.Name)
			p.member(recv, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decl(s.Name.Name)
					p.addType(s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decl(n.Name)
					}
				}
			}
		}
	}
}

func (p *pkgIndex) member(typ, name string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][name] = true
}

// addType records the fields, interface methods and embedded types of typ.
func (p *pkgIndex) addType(typ string, expr ast.Expr) {
	var fields *ast.FieldList
	switch e := expr.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		if n := typeName(expr); n != "" { // type T U, type T = U: T has U's members
			p.embeds[typ] = append(p.embeds[typ], n)
		}
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			n := typeName(f.Type)
			p.embeds[typ] = append(p.embeds[typ], n)
			p.member(typ, n[strings.LastIndex(n, ".")+1:])
		}
		for _, n := range f.Names {
			p.member(typ, n.Name)
		}
	}
}

// typeName is the name of a type expression: "T", "pkg.T", or "" for a
// type literal.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}

func recvName(e ast.Expr) string { return typeName(e) }

// hasMember reports whether typ of p has the field or method name, its
// own or promoted from an embedded type. A type embedding a type of
// another package is taken to have any member.
func (p *pkgIndex) hasMember(typ, name string, depth int) bool {
	if p.members[typ][name] {
		return true
	}
	if depth > 5 {
		return false
	}
	for _, e := range p.embeds[typ] {
		if strings.Contains(e, ".") || p.hasMember(e, name, depth+1) {
			return true
		}
	}
	return false
}

// has reports whether p declares name (a top-level name, or Type.Member).
func (p *pkgIndex) has(name string, tests bool) bool {
	if _, ok := p.decls[name]; ok || (tests && p.testDecls[name]) {
		return true
	}
	if typ, mem, ok := strings.Cut(name, "."); ok && !strings.Contains(mem, ".") {
		_, isType := p.decls[typ]
		return (isType || (tests && p.testDecls[typ])) && p.hasMember(typ, mem, 0)
	}
	return false
}

// externalPkg returns the index of the non-module package at import path
// ipath (from the standard library or the module cache), or nil when the
// go command does not find it.
func (m *moduleIndex) externalPkg(ipath string) *pkgIndex {
	if p, ok := m.external[ipath]; ok {
		return p
	}
	m.external[ipath] = nil
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", ipath)
	cmd.Dir = m.root
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	dir := strings.TrimSpace(string(out))
	p := newPkgIndex(dir, ipath)
	fset := token.NewFileSet()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err == nil {
			p.name = f.Name.Name
			p.add(f, e.Name(), false)
		}
	}
	m.external[ipath] = p
	return p
}
