package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestServeRefusesMissingAuditDir checks that an audit log in a directory
// that does not exist is refused with one line naming it, exit 2, and
// that the directory is not created.
func TestServeRefusesMissingAuditDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such")
	var stdout, stderr bytes.Buffer
	args := []string{"-listen", "127.0.0.1:0", "-data-dir", t.TempDir(), "-audit-log", filepath.Join(missing, "a.log")}
	code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
	want := `robotsgate: config: audit_log: directory "` + missing + `" does not exist; create it first ` +
		"(robotsgate does not create directories) (flag -audit-log, env ROBOTSGATE_AUDIT_LOG)\n"
	if code != 2 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("serve created the audit log's directory: %v", err)
	}
}

// TestServeBeyondLoopbackNamesEverythingMissing checks that serve's
// refusal of an open listen address names credentials, client networks
// and the admin token, with their flags, in one line.
func TestServeBeyondLoopbackNamesEverythingMissing(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runServe(stopped(), []string{"-listen", "0.0.0.0:0"}, testsupport.EnvMap(nil), &stdout, &stderr, nil)
	line := stderr.String()
	if code != 2 || strings.Count(line, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line", code, line)
	}
	for _, w := range []string{"-credentials-file", "ROBOTSGATE_ALLOW_CIDRS", "-admin-token", "-allow-open"} {
		if !strings.Contains(line, w) {
			t.Errorf("%q lacks %q", line, w)
		}
	}
}

// stopped returns a context already done: a serve that gets past its
// checks stops at once instead of serving.
func stopped() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, testsupport.EnvMap(nil), nil, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "robotsgate ") || !strings.HasPrefix(lines[1], "commit: ") ||
			!strings.HasPrefix(lines[2], "commit_time: ") || lines[3] != "go: "+runtime.Version() {
			t.Errorf("%v: %q", args, stdout.String())
		}
	}
}

func TestVersionLines(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
		{Key: "vcs.time", Value: "2001-02-03T04:05:06Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	clean := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"},
	}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"stamped", stamped, []string{"robotsgate v1.2.3", "commit: 0123abcd (modified)", "commit_time: 2001-02-03T04:05:06Z", "go: go1.99.1"}},
		{"clean checkout", clean, []string{"robotsgate (devel)", "commit: 0123abcd", "commit_time: unknown", "go: go1.99.1"}},
		{"no build info", nil, []string{"robotsgate (devel)", "commit: unknown", "commit_time: unknown", "go: " + runtime.Version()}},
	} {
		if got := versionLines(tc.bi, buildStamp{}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionLinesStamp: what the linker stamped (-X main.stamp*, the
// container image's build arguments) fills in what the build information
// lacks and wins over what it has.
func TestVersionLinesStamp(t *testing.T) {
	noVCS := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}}
	withVCS := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2001-02-03T04:05:06Z"},
	}}
	stamp := buildStamp{version: "v1.2.3", commit: "fedc9876", time: "2002-03-04T05:06:07Z"}
	for _, tc := range []struct {
		name  string
		bi    *debug.BuildInfo
		stamp buildStamp
		want  []string
	}{
		{"image", noVCS, stamp, []string{"robotsgate v1.2.3", "commit: fedc9876", "commit_time: 2002-03-04T05:06:07Z", "go: go1.99.1"}},
		{"commit only", noVCS, buildStamp{commit: "fedc9876"}, []string{"robotsgate (devel)", "commit: fedc9876", "commit_time: unknown", "go: go1.99.1"}},
		{"stamp wins", withVCS, stamp, []string{"robotsgate v1.2.3", "commit: fedc9876", "commit_time: 2002-03-04T05:06:07Z", "go: go1.99.1"}},
	} {
		if got := versionLines(tc.bi, tc.stamp); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestShutdownLogNamesItsUnit checks that the operator log's durations
// carry their unit in the field name.
func TestShutdownLogNamesItsUnit(t *testing.T) {
	r := startServe(t, []string{"-shutdown-timeout", "1500ms", "-audit-log", "-"}, nil)
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, r.stderr)
	}
	var rec map[string]any
	for _, l := range strings.Split(r.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.HasPrefix(fmt.Sprint(m["message"]), "shutting down") {
			rec = m
		}
	}
	if rec == nil || rec["timeout_ms"] != float64(1500) || rec["timeout"] != nil {
		t.Errorf("shutdown record %v; want timeout_ms 1500 and no bare timeout\n%s", rec, r.stderr)
	}
}

// TestServeWarnsUnknownEnv: a misspelled ROBOTSGATE_ variable in the
// process environment is a warning with the closest setting's variable;
// the tests' own variables are not.
func TestServeWarnsUnknownEnv(t *testing.T) {
	t.Setenv("ROBOTSGATE_LISEN", "127.0.0.1:1")
	t.Setenv("ROBOTSGATE_REQUIRE_REDIS", "1")
	var stdout, stderr bytes.Buffer
	args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", t.TempDir(), "-log-format", "json"}
	if code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := `"message":"unknown environment variable ROBOTSGATE_LISEN is ignored (did you mean ROBOTSGATE_LISTEN?)"`
	var line string
	for l := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.Contains(l, "ROBOTSGATE_LISEN") {
			line = l
		}
	}
	if !strings.HasPrefix(line, `{"level":"warn",`) || !strings.Contains(line, want) || strings.Contains(stderr.String(), "ROBOTSGATE_REQUIRE_REDIS") {
		t.Fatalf("stderr lacks %s (or warns about ROBOTSGATE_REQUIRE_REDIS):\n%s", want, stderr.String())
	}
}

// TestServeBadCredentialsFileOneLine: a credentials file that cannot be
// used (a bad line, a mode others can read) stops the start with exactly
// one line on stderr, before any log line (such as the new CA's).
func TestServeBadCredentialsFileOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		mode             os.FileMode
	}{
		{"bad line", "nocolon\n", `:1: want "user:password"`, 0o600},
		{"readable by others", "crawler:s3cret\n", "run `chmod 600 ", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "creds")
			if err := os.WriteFile(f, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, tc.mode); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", filepath.Join(t.TempDir(), "d"), "-credentials-file", f}
			code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
			if code != 2 || strings.Count(stderr.String(), "\n") != 1 ||
				!strings.HasPrefix(stderr.String(), "robotsgate: auth.credentials_file ") || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr.String(), tc.want)
			}
		})
	}
}

// TestServeDataDirMissingParent: a -data-dir whose parent is missing (a
// typo) is one line and exit 2, and nothing is created; a data dir whose
// parent exists is created, with a warning naming it and the certificate
// clients must trust.
func TestServeDataDirMissingParent(t *testing.T) {
	t.Run("missing parent", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nonexistent", "deep", "dir")
		var stdout, stderr bytes.Buffer
		args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", dir}
		code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil)
		want := "robotsgate: https.data_dir " + dir + ": its parent directory " + filepath.Dir(dir) + " does not exist"
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) ||
			!strings.Contains(stderr.String(), "-data-dir") {
			t.Fatalf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr.String(), want)
		}
		if _, err := os.Stat(filepath.Dir(filepath.Dir(dir))); !os.IsNotExist(err) {
			t.Fatalf("serve created the data dir's parents: %v", err)
		}
	})
	t.Run("first CA warns", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ca")
		var stdout, stderr bytes.Buffer
		args := []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", dir, "-log-format", "json"}
		if code := runServe(stopped(), args, testsupport.EnvMap(nil), &stdout, &stderr, nil); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var line string
		for l := range strings.SplitSeq(stderr.String(), "\n") {
			if strings.Contains(l, "created a new CA") {
				line = l
			}
		}
		if !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, "in "+dir+":") ||
			!strings.Contains(line, "must trust its certificate "+filepath.Join(dir, "robotsgate-ca-cert.pem")) {
			t.Fatalf("no warning naming the directory and the certificate: %q\n%s", line, stderr.String())
		}
	})
}
