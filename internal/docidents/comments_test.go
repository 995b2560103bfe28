package docidents

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"unicode"
)

var (
	// docLink is a Go doc link: `[Name]`, `[Name.Method]`, `[pkg.Name]`,
	// `[pkg.Name.Method]`, `[*pkg.Name]` or `[import/path.Name]`, set off
	// by space or punctuation (so that m[k] is not one) and not a link
	// definition ("[text]: URL").
	docLink = regexp.MustCompile(`(?:^|[^\w\])])\[(\*?[A-Za-z_][\w./-]*)\](?:[^\w(\[]|$)`)
	// dotted is a qualified name: pkg.Name, Type.Method, pkg.Type.Method,
	// optionally called ("()").
	dotted = regexp.MustCompile(`(?:^|[^\w./\-*])\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,2})(?:\(\))?`)
	// mixedCase is a single word that can only be a Go identifier:
	// `lowerThenUpper`, `CapitalThenUpper`, or a call (`name()`).
	mixedCase = regexp.MustCompile(`(?:^|[^\w./\-])([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Za-z_]\w*\(\))`)
	// quoted spans hold examples, not names: "..." and `...`, and URLs.
	quoted = regexp.MustCompile("\"[^\"]*\"|`[^`]*`|https?://\\S+")
)

// notCode are the second parts of dotted words that name files, hosts
// and the like rather than code (robots.txt, example.com).
var notCode = map[string]bool{
	"go": true, "md": true, "txt": true, "yaml": true, "yml": true, "json": true, "jsonl": true, "sh": true,
	"com": true, "org": true, "net": true, "io": true, "test": true, "example": true, "invalid": true,
	"html": true, "xml": true, "crt": true, "key": true, "pem": true, "log": true, "mod": true, "sum": true,
	"local": true, "localhost": true, "arpa": true, "in": true, "dev": true, "v2": true, "v3": true,
}

// words are mixed-case words of prose, not code.
var words = map[string]bool{
	"JavaScript": true, "GitHub": true, "PowerShell": true, "TypeScript": true, "WebSocket": true,
	"WebSockets": true, "YouTube": true, "LinkedIn": true, "OpenAI": true, "ChatGPT": true, "GPTBot": true,
	"ClaudeBot": true, "CommonCrawl": true, "PerplexityBot": true, "DuckDuckGo": true, "iPhone": true,
	"macOS": true, "iOS": true, "PostgreSQL": true, "PromQL": true, "AppleWebKit": true,
	"KiB": true, "MiB": true, "GiB": true,
	"GetPathParamsQuery": true,                                                    // of Google's robots.txt parser
	"ClientHello":        true, "ServerHello": true, "SubjectPublicKeyInfo": true, // TLS and X.509
	"CapEff": true, // of /proc/self/status
}

// stdNames maps the name of each standard library package to its path.
func stdNames() map[string]string {
	out := map[string]string{}
	b, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "std").Output()
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, p, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(p, "internal") || strings.HasPrefix(p, "vendor/") {
			continue
		}
		if _, dup := out[name]; !dup {
			out[name] = p
		}
	}
	return out
}

// resolver answers whether a name a comment uses exists.
type resolver struct {
	*moduleIndex
	std map[string]string
}

// packagesNamed returns the packages that qualifier q names as seen from
// sf: its import of that name, else the module's packages of that name,
// else the standard library's.
func (r *resolver) packagesNamed(sf *sourceFile, q string) []*pkgIndex {
	if sf != nil {
		if p, ok := sf.imports[q]; ok {
			return r.pkgAt(p)
		}
	}
	if ps := r.byName[q]; len(ps) > 0 {
		return ps
	}
	if p, ok := r.std[q]; ok {
		return r.pkgAt(p)
	}
	return nil
}

// pkgAt returns the package at import path p, in the module or not.
func (r *resolver) pkgAt(p string) []*pkgIndex {
	if pkg := r.byPath[p]; pkg != nil {
		return []*pkgIndex{pkg}
	}
	if pkg := r.externalPkg(p); pkg != nil {
		return []*pkgIndex{pkg}
	}
	return nil
}

// link reports whether a doc link's target exists, seen from sf.
func (r *resolver) link(sf *sourceFile, target string) bool {
	target = strings.TrimPrefix(target, "*")
	if i := strings.LastIndex(target, "/"); i >= 0 {
		ipath, name := target, ""
		if j := strings.Index(target[i:], "."); j >= 0 {
			ipath, name = target[:i+j], target[i+j+1:]
		}
		for _, p := range r.pkgAt(ipath) {
			if name == "" || p.has(name, false) {
				return true
			}
		}
		return false
	}
	if sf.pkg.has(target, sf.test) {
		return true
	}
	q, name, qualified := strings.Cut(target, ".")
	for _, p := range r.packagesNamed(sf, q) {
		if !qualified || p.has(name, false) {
			return true
		}
	}
	return false
}

// qualified reports whether a dotted name found in prose exists (ok), and
// whether it is code at all (checked): it is when its first part is a
// package or a type of the module.
func (r *resolver) qualified(sf *sourceFile, name string) (ok, checked bool) {
	parts := strings.Split(name, ".")
	last := parts[len(parts)-1]
	if notCode[last] || strings.ToLower(name) == name || (len(last) > 1 && strings.ToUpper(last) == last) {
		return true, false // a file, a host, a setting (robots.max_redirects), main.NAME
	}
	if pkgs := r.packagesNamed(sf, parts[0]); len(pkgs) > 0 {
		return r.link(sf, name), true
	}
	if len(parts) != 2 {
		return true, false
	}
	typeFound := false
	for _, p := range append([]*pkgIndex{sf.pkg}, r.allPackages()...) {
		if _, isType := p.members[parts[0]]; isType || p.decls[parts[0]] != "" {
			typeFound = true
			if p.has(name, sf.test) {
				return true, true
			}
		}
	}
	return !typeFound, typeFound
}

func (r *resolver) allPackages() []*pkgIndex {
	out := make([]*pkgIndex, 0, len(r.byPath))
	for _, p := range r.byPath {
		out = append(out, p)
	}
	return out
}

// commentProblems returns, for every comment of the module's Go files,
// the doc links that do not resolve and the code-shaped names (mixedCase,
// name(), pkg.Name, Type.Method) that the code does not have.
func (r *resolver) commentProblems() []string {
	var out []string
	for _, sf := range r.files {
		for _, cg := range sf.file.Comments {
			for _, c := range cg.List {
				line := sf.fset.Position(c.Pos()).Line
				for i, text := range commentLines(c.Text) {
					for _, bad := range r.lineProblems(sf, text) {
						out = append(out, fmt.Sprintf("%s:%d: %s", sf.rel, line+i, bad))
					}
				}
			}
		}
	}
	return out
}

// commentLines returns the prose lines of a comment: markers removed,
// directives and indented (code block) lines left out.
func commentLines(c string) []string {
	var lines []string
	if strings.HasPrefix(c, "//") {
		lines = []string{c[2:]}
	} else {
		lines = strings.Split(strings.TrimSuffix(strings.TrimPrefix(c, "/*"), "*/"), "\n")
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, "go:") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") ||
			strings.HasPrefix(l, "nolint") || strings.HasPrefix(l, "line ") {
			continue
		}
		out[i] = l
	}
	return out
}

// lineProblems checks one line of prose of a comment in sf.
func (r *resolver) lineProblems(sf *sourceFile, text string) []string {
	var out []string
	if linkDef.MatchString(text) {
		return nil
	}
	text = blank(quoted, text)
	for _, m := range docLink.FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], "-") && !strings.Contains(m[1], "/") {
			continue // [A-Za-z_-]: a character class
		}
		if !r.link(sf, m[1]) {
			out = append(out, fmt.Sprintf("doc link [%s] does not resolve", m[1]))
		}
	}
	prose := blank(docLinkSpan, text)
	for _, m := range dotted.FindAllStringSubmatchIndex(prose, -1) {
		name := prose[m[2]:m[3]]
		if m[3] < len(prose)-1 && prose[m[3]] == '.' && isWord(prose[m[3]+1]) {
			continue // a longer dotted word: a host, a file, a version
		}
		if ok, _ := r.qualified(sf, name); !ok {
			out = append(out, fmt.Sprintf("%s is not in the code", name))
		}
	}
	if sf.test {
		return out // test names (TestBot, ClosedBot) are strings, not code
	}
	for _, m := range mixedCase.FindAllStringSubmatchIndex(prose, -1) {
		word := strings.TrimSuffix(prose[m[2]:m[3]], "()")
		if m[3] < len(prose) && (prose[m[3]] == '.' && m[3]+1 < len(prose) && isWord(prose[m[3]+1]) || prose[m[3]] == '-') {
			continue
		}
		if !r.known(sf, word) {
			out = append(out, fmt.Sprintf("%s is not in the code", prose[m[2]:m[3]]))
		}
	}
	return out
}

// known reports whether a word of a comment in sf names code of the
// module or of a package sf imports, or is a word of prose.
func (r *resolver) known(sf *sourceFile, word string) bool {
	if r.idents[word] || r.idents[strings.TrimSuffix(word, "s")] || words[word] || isUnitOrAcronym(word) {
		return true
	}
	for _, p := range sf.imports {
		if _, inModule := r.byPath[p]; inModule {
			continue
		}
		if pkg := r.externalPkg(p); pkg != nil && pkg.has(word, false) {
			return true
		}
	}
	return false
}

// linkDef is a link definition line of a doc comment: "[text]: URL".
var linkDef = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*\S+\s*$`)

// blank replaces the matches of re in s with as many spaces, so that
// offsets in the result are offsets in s.
func blank(re *regexp.Regexp, s string) string {
	return re.ReplaceAllStringFunc(s, func(m string) string { return strings.Repeat(" ", len(m)) })
}

// docLinkSpan is a bracketed span, checked as a doc link or not code.
var docLinkSpan = regexp.MustCompile(`\[[^\]]*\]`)

func isWord(b byte) bool { return b == '_' || unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b)) }

// isUnitOrAcronym reports words such as IPv4, kB, mTLS, x509: letters
// and digits whose case does not mark a Go identifier.
func isUnitOrAcronym(w string) bool {
	switch {
	case strings.HasPrefix(w, "IPv"), strings.HasPrefix(w, "HTTPv"):
		return true
	case len(w) <= 4 && strings.ToUpper(w[1:]) == w[1:]:
		return true // mTLS, eTLD, kB
	}
	return false
}
