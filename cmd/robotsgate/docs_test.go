package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
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
	checkTarget(t, fmt.Sprintf("%s:%d", file, line), file, path.Dir(file), target)
}

// checkTarget reports a link target, relative to the repository directory
// dir (self when it names no file), that names no existing file or a
// heading its Markdown target does not have; where says where it was found.
func checkTarget(t *testing.T, where, self, dir, target string) {
	t.Helper()
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	name, fragment, _ := strings.Cut(target, "#")
	resolved := self
	if name != "" {
		resolved = path.Clean(path.Join(dir, name))
	}
	if resolved == ".." || strings.HasPrefix(resolved, "../") || path.IsAbs(resolved) {
		t.Errorf("%s: link %q points outside the repository", where, target)
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
		t.Errorf("%s: link %q: %v", where, target, err)
		return
	}
	if fragment != "" && strings.HasSuffix(resolved, ".md") && !headingAnchors(b)[fragment] {
		t.Errorf("%s: link %q: %s has no heading #%s", where, target, resolved, fragment)
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

// readmeServe is how the README's Quickstart starts robotsgate: the
// binary, which Ctrl-C stops (go run's child would outlive a killed
// go run and keep the port).
const readmeServe = "go build -o robotsgate ./cmd/robotsgate && ./robotsgate"

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
		serve = serve || strings.TrimSpace(line) == readmeServe
	}
	if !found {
		t.Errorf("README.md has no code line %q, the test command of .ci/run", command)
	}
	if !serve {
		t.Errorf("README.md has no code line %q", readmeServe)
	}
}

// commentFiles returns the files outside Markdown whose comments point
// readers at the documentation: the Dockerfile, docker-compose.yml and
// every YAML file under configs/.
func commentFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"Dockerfile", "docker-compose.yml"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "configs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// commentPath matches a repository path in a comment, with an optional
// heading: docs/production.md#container-image, configs/prometheus/.
var commentPath = regexp.MustCompile(`(?:^|[\s("'])((?:README|CONTRIBUTING)\.md|(?:docs|configs|scripts|examples|cmd)/[\w./-]*)(#[\w-]+)?`)

// commentSection matches a section named by its title in a comment:
// README "Scaling out", docs/redis.md "What the replicas share".
var commentSection = regexp.MustCompile(`((?:README|CONTRIBUTING)(?:\.md)?|docs/[\w.-]+\.md) "([^"]+)"`)

// commentText returns the comments of a Dockerfile or YAML file by line
// number: whole-line comments and the part of a line after " #".
func commentText(b []byte) map[int]string {
	out := map[int]string{}
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "#"):
			out[i+1] = trimmed[1:]
		case strings.Contains(line, " #"):
			out[i+1] = line[strings.Index(line, " #")+2:]
		}
	}
	return out
}

// TestCommentLinksResolve: every repository path and every section a
// comment of the Dockerfile, docker-compose.yml or the example configs
// names exists (a heading for path#anchor and for `FILE "Title"`).
func TestCommentLinksResolve(t *testing.T) {
	refs := 0
	for _, file := range commentFiles(t) {
		for n, c := range commentText(readRepoFile(t, file)) {
			for _, m := range commentPath.FindAllStringSubmatch(c, -1) {
				refs++
				// Comments name paths from the repository's root.
				checkTarget(t, fmt.Sprintf("%s:%d", file, n), file, ".", strings.TrimRight(m[1], ".,:;")+m[2])
			}
			for _, m := range commentSection.FindAllStringSubmatch(c, -1) {
				refs++
				name := m[1]
				if !strings.HasSuffix(name, ".md") {
					name += ".md"
				}
				if !headingAnchors(readRepoFile(t, name))[anchorOf(m[2])] {
					t.Errorf("%s:%d: %s has no section %q", file, n, name, m[2])
				}
			}
		}
	}
	if refs == 0 {
		t.Fatal("no references found in the comments: the patterns match nothing")
	}
}

// anchorOf returns the anchor GitHub gives a heading titled title.
func anchorOf(title string) string {
	for a := range headingAnchors([]byte("# " + title + "\n")) {
		return a
	}
	return ""
}

// TestHTTPSDocOneDataDir: the MITM steps of docs/https.md use one data
// directory, so that the CA step 2 shows (and the reader trusts) is the
// one serve uses in step 1.
func TestHTTPSDocOneDataDir(t *testing.T) {
	var mitm string
	for _, section := range strings.Split(string(readRepoFile(t, "docs/https.md")), "\n## ") {
		if strings.HasPrefix(section, "MITM") {
			mitm = section
		}
	}
	_, code := proseLines([]byte(mitm))
	dataDir := regexp.MustCompile(`-data-dir[= ](\S+)`)
	dirs := map[string]bool{}
	commands := 0
	runs := regexp.MustCompile(`(^|\s)(\./robotsgate|go run \./cmd/robotsgate)\s`)
	for _, line := range code {
		if !runs.MatchString(line) {
			continue
		}
		commands++
		m := dataDir.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("docs/https.md: %q names no -data-dir: it uses the default directory, not the steps' one", strings.TrimSpace(line))
			continue
		}
		dirs[m[1]] = true
	}
	if commands < 2 {
		t.Fatalf("docs/https.md: found %d robotsgate commands, want the serve and ca steps", commands)
	}
	if len(dirs) != 1 {
		t.Errorf("docs/https.md: the steps use %d data directories %v, want one", len(dirs), dirs)
	}
}

// TestExampleAuditLogIgnored: an audit log the README or docs write with a
// relative -audit-log path (into the clone) is git-ignored.
func TestExampleAuditLogIgnored(t *testing.T) {
	var ignore []string
	for _, l := range strings.Split(string(readRepoFile(t, ".gitignore")), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ignore = append(ignore, strings.TrimPrefix(l, "/"))
		}
	}
	auditLog := regexp.MustCompile(`-audit-log[= ](\S+)`)
	found := 0
	for _, file := range docFiles(t) {
		_, code := proseLines(readRepoFile(t, file))
		for _, line := range code {
			m := auditLog.FindStringSubmatch(line)
			if m == nil || m[1] == "-" || path.IsAbs(m[1]) {
				continue
			}
			found++
			if !slices.ContainsFunc(ignore, func(p string) bool { ok, _ := path.Match(p, m[1]); return ok }) {
				t.Errorf("%s: %q writes %s into the clone, and .gitignore does not ignore it", file, strings.TrimSpace(line), m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("no relative -audit-log in the docs: the README's example changed; update this test")
	}
}

// TestReadmeInstallsFromClone: the module is not published, so the README
// installs from a clone (go install ./cmd/robotsgate) and offers no
// `go install ...@latest` command, which fails.
func TestReadmeInstallsFromClone(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	_, code := proseLines(readme)
	fromClone := false
	for _, line := range code {
		cmd := strings.TrimSpace(line)
		if strings.HasPrefix(cmd, "go install") && strings.Contains(cmd, "@") {
			t.Errorf("README.md offers %q: the module is not published, so it fails", cmd)
		}
		fromClone = fromClone || strings.HasPrefix(cmd, "go install ./cmd/robotsgate")
	}
	if !fromClone {
		t.Error("README.md has no `go install ./cmd/robotsgate` (installing from a clone)")
	}
	if !bytes.Contains(readme, []byte("not published")) {
		t.Error("README.md does not say that the module is not published")
	}
}
