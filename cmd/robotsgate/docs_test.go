package main

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds README.md: everything else belongs in docs/.
const readmeMaxLines = 300

// docsWrittenElsewhere are link targets other changes provide; a link to
// one of them is accepted while it is absent.
var docsWrittenElsewhere = map[string]bool{
	"docs/configuration.md": true,
	"docs/architecture.md":  true,
	"docs/clients.md":       true,
}

// markdownLink matches the target of an inline link or image:
// [text](target) or [text](target "title").
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

// proseLines returns the lines of a Markdown file outside fenced code
// blocks by their 1-based numbers, and the lines inside them.
func proseLines(md []byte) (prose map[int]string, inCode []string) {
	prose = map[int]string{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			inCode = append(inCode, line)
		} else {
			prose[n] = line
		}
	}
	return prose, inCode
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(md []byte) map[string]bool {
	anchors := map[string]bool{}
	prose, _ := proseLines(md)
	for _, line := range prose {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md"}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	return files
}

// checkLink reports a relative link in file that names no existing file, or
// a heading its Markdown target does not have.
func checkLink(t *testing.T, file string, line int, target string) {
	t.Helper()
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	name, fragment, _ := strings.Cut(target, "#")
	resolved := file
	if name != "" {
		resolved = path.Clean(path.Join(path.Dir(file), name))
	}
	if resolved == ".." || strings.HasPrefix(resolved, "../") || path.IsAbs(resolved) {
		t.Errorf("%s:%d: link %q points outside the repository", file, line, target)
		return
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(resolved)))
	if os.IsNotExist(err) && docsWrittenElsewhere[resolved] {
		return
	}
	info, statErr := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(resolved)))
	if statErr == nil && info.IsDir() {
		return
	}
	if err != nil {
		t.Errorf("%s:%d: link %q: %v", file, line, target, err)
		return
	}
	if fragment != "" && strings.HasSuffix(resolved, ".md") && !headingAnchors(b)[fragment] {
		t.Errorf("%s:%d: link %q: %s has no heading #%s", file, line, target, resolved, fragment)
	}
}

func TestReadmeAtMostMaxLines(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	if n := bytes.Count(readme, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move detail to docs/", n, readmeMaxLines)
	}
}

func TestDocsRelativeLinksResolve(t *testing.T) {
	files := docFiles(t)
	if len(files) < 3 {
		t.Fatalf("found only %v: docs/*.md missing", files)
	}
	links := 0
	for _, file := range files {
		prose, _ := proseLines(readRepoFile(t, file))
		for n, line := range prose {
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				links++
				checkLink(t, file, n, m[1])
			}
		}
	}
	if links == 0 {
		t.Fatal("no links found: the link pattern matches nothing")
	}
}

// ciTestCommandMarker is the comment in .ci/run on the line before the
// README's test command.
const ciTestCommandMarker = "# The README's test command:"

func TestReadmeTestCommandMatchesCI(t *testing.T) {
	ci := strings.Split(string(readRepoFile(t, ".ci/run")), "\n")
	command := ""
	for i, line := range ci {
		if strings.TrimSpace(line) == ciTestCommandMarker && i+1 < len(ci) {
			command = strings.TrimSpace(ci[i+1])
		}
	}
	if !strings.HasPrefix(command, "go test ") {
		t.Fatalf(".ci/run: no `go test` line after %q (found %q)", ciTestCommandMarker, command)
	}
	_, code := proseLines(readRepoFile(t, "README.md"))
	var found, serve bool
	for _, line := range code {
		found = found || strings.TrimSpace(line) == command
		serve = serve || strings.TrimSpace(line) == "go run ./cmd/robotsgate"
	}
	if !found {
		t.Errorf("README.md has no code line %q, the test command of .ci/run", command)
	}
	if !serve {
		t.Errorf("README.md has no code line %q", "go run ./cmd/robotsgate")
	}
}
