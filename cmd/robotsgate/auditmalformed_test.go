package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAuditMalformedLinesNamed: the lines robotsgate audit skips as
// malformed (a record cut short, one glued to a fragment) are counted
// and named by line number on stderr and in -summary, as text and JSON.
func TestAuditMalformedLinesNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	good := `{"time":"2001-02-03T04:05:06Z","decision":"blocked","reason":"disallowed","url":"https://x.test/a","origin":"https://x.test"}`
	log := good + "\n" + `{"time":"2001-02-03T04:05:06Z","decis` + good + "\n" + good + "\n" + `{"time":"20` + "\n"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "2 malformed line(s) skipped: " + path + ":2, " + path + ":4"
	t.Run("stderr", func(t *testing.T) {
		code, _, errOut := runAuditTest(t, nil, path)
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
		}
	})
	t.Run("summary", func(t *testing.T) {
		_, out, _ := runAuditTest(t, nil, "-summary", path)
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	})
	t.Run("summary json", func(t *testing.T) {
		_, out, _ := runAuditTest(t, nil, "-summary", "-json", path)
		var sum struct {
			Malformed   int      `json:"malformed"`
			MalformedAt []string `json:"malformed_lines"`
		}
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Malformed != 2 ||
			!slices.Equal(sum.MalformedAt, []string{path + ":2", path + ":4"}) {
			t.Errorf("-summary -json %s: %+v %v", out, sum, err)
		}
	})
}
