package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// scriptedReads is a FileReader whose reads return the given contents in
// turn (the last one again once they run out), as a file being rewritten
// would; pauses are counted, never slept.
type scriptedReads struct {
	contents []string
	reads    int
	pauses   int
}

func (s *scriptedReads) reader() FileReader {
	return FileReader{
		Read: func(string) ([]byte, error) {
			c := s.contents[min(s.reads, len(s.contents)-1)]
			s.reads++
			return []byte(c), nil
		},
		Pause: func() { s.pauses++ },
	}
}

// TestLoadWaitsForAStableFile: a file caught empty or cut short by a
// rewrite is read again until two reads agree, and the whole file is
// what is loaded; a file that never settles is refused.
func TestLoadWaitsForAStableFile(t *testing.T) {
	whole := "agent: MyBot\nsites:\n  - match: denied.example\n    policy: deny\n"
	for name, reads := range map[string][]string{
		"empty, then whole":     {"", whole, whole},
		"cut short, then whole": {whole[:14], whole[:30], whole, whole},
		"cut in a key":          {whole[:20], whole},
	} {
		s := &scriptedReads{contents: reads}
		cfg, err := LoadWith([]string{"-config", "robotsgate.yaml"}, noEnv(), s.reader())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Agent != "MyBot" || len(cfg.Sites) != 1 || cfg.EmptyFile() {
			t.Errorf("%s: loaded agent %q, %d sites, empty %v; want the whole file", name, cfg.Agent, len(cfg.Sites), cfg.EmptyFile())
		}
		if s.pauses == 0 {
			t.Errorf("%s: no pause between reads", name)
		}
	}
	s := &scriptedReads{contents: []string{"", "a", "agent: X\n", "agent: XY\n", "agent: XYZ\n", "agent: XYZW\n", "mode: report\n", "agent: Z\n"}}
	if _, err := LoadWith([]string{"-config", "robotsgate.yaml"}, noEnv(), s.reader()); !errors.Is(err, ErrFileChanging) {
		t.Fatalf("a file that never settles: %v, want ErrFileChanging", err)
	}
}

// TestLoadEmptyFile: a file without a setting (empty, comments, an empty
// document) loads, and says so.
func TestLoadEmptyFile(t *testing.T) {
	for _, content := range []string{"", "\n\n", "# all commented out\n#sites:\n", "---\n", "{}\n", "~\n"} {
		s := &scriptedReads{contents: []string{content}}
		cfg, err := LoadWith([]string{"-config", "robotsgate.yaml"}, noEnv(), s.reader())
		if err != nil || !cfg.EmptyFile() {
			t.Errorf("%q: empty %v, %v", content, cfg.EmptyFile(), err)
		}
	}
	path := filepath.Join(t.TempDir(), "robotsgate.yaml")
	if err := os.WriteFile(path, []byte("agent: MyBot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load([]string{"-config", path}, noEnv()); err != nil || cfg.EmptyFile() || cfg.Agent != "MyBot" {
		t.Fatalf("a real file: %+v %v", cfg.Agent, err)
	}
	if cfg, err := Load(nil, noEnv()); err != nil || cfg.EmptyFile() {
		t.Fatalf("no file: empty %v %v", cfg.EmptyFile(), err)
	}
}

// noEnv is an empty environment.
func noEnv() func(string) string { return testsupport.EnvMap(nil) }
