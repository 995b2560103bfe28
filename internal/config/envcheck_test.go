package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUnknownEnv: a misspelled ROBOTSGATE_ variable warns with the
// closest setting's; settings, ROBOTSGATE_CONFIG, the tests' variables,
// empty ones and other prefixes do not.
func TestUnknownEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"misspelled", []string{"ROBOTSGATE_LISEN=127.0.0.1:9309"},
			[]string{"unknown environment variable ROBOTSGATE_LISEN is ignored (did you mean ROBOTSGATE_LISTEN?)"}},
		{"far from any", []string{"ROBOTSGATE_XYZZY_PLUGH_FROB=1"},
			[]string{"unknown environment variable ROBOTSGATE_XYZZY_PLUGH_FROB is ignored"}},
		{"settings and config", []string{"ROBOTSGATE_LISTEN=x", "ROBOTSGATE_CONFIG=f", "ROBOTSGATE_ROBOTS_TTL=1h", "ROBOTSGATE_SIGNATURE_AGENT=x"}, nil},
		{"tests and CI", []string{"ROBOTSGATE_REQUIRE_REDIS=1", "ROBOTSGATE_REQUIRE_NETNS=1", "ROBOTSGATE_REQUIRE_NODE=1", "ROBOTSGATE_ROBOTS_CORPUS=/c"}, nil},
		{"empty counts as unset", []string{"ROBOTSGATE_LISEN="}, nil},
		{"other prefixes", []string{"ROBOTSGATEX=1", "HTTP_PROXY=x", "robotsgate_lisen=x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnknownEnv(tc.environ); !slices.Equal(got, tc.want) {
				t.Fatalf("UnknownEnv(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}

// TestUnknownEnvRepositoryNames: every ROBOTSGATE_ name the repository
// uses (tests, CI, scripts, docs, compose files) is a setting or a
// variable of the tests, so that none of them warns; the deliberately
// misspelled examples excepted.
func TestUnknownEnvRepositoryNames(t *testing.T) {
	misspelled := []string{"ROBOTSGATE_LISEN", "ROBOTSGATE_XYZZY_PLUGH_FROB"}
	re := regexp.MustCompile(`ROBOTSGATE_[A-Z0-9_]*[A-Z0-9]`)
	root := filepath.Join("..", "..")
	seen := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" || n == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllString(string(b), -1) {
			seen[m] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range seen {
		if slices.Contains(misspelled, name) {
			continue
		}
		if w := UnknownEnv([]string{name + "=1"}); len(w) != 0 && !strings.HasSuffix(name, "_") {
			t.Errorf("%s (in %s) would warn: add it to toolingEnv or correct it", name, path)
		}
	}
}
