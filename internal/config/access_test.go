package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExposureListsEverythingMissingAtOnce checks that one start beyond
// loopback reports every missing control, each with its YAML key, flag
// and environment variable, and the waiver, in one line.
func TestExposureListsEverythingMissingAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   []string
		not    []string
	}{
		{"proxy and admin on all interfaces", func(c *Config) { c.Listen = "0.0.0.0:9309" }, []string{
			`listen: "0.0.0.0:9309" is not a loopback address`,
			"credentials: auth.credentials or auth.credentials_file (flag -credentials-file, env ROBOTSGATE_CREDENTIALS_FILE)",
			"client networks (0.0.0.0/0 and ::/0 for any): auth.allow_cidrs (flag -allow-cidrs, env ROBOTSGATE_ALLOW_CIDRS)",
			`admin API on listen "0.0.0.0:9309"`,
			"admin_token (flag -admin-token, env ROBOTSGATE_ADMIN_TOKEN)",
			"auth.allow_open: true (flag -allow-open, env ROBOTSGATE_ALLOW_OPEN)",
		}, nil},
		{"separate admin beyond loopback too", func(c *Config) {
			c.Listen = "[::]:9309"
			c.AdminListen = "0.0.0.0:9310"
			c.Auth.Credentials = []string{"a:b"}
		}, []string{
			`listen: "[::]:9309"`, "client networks", `admin API on admin_listen "0.0.0.0:9310"`, "admin_token (flag -admin-token",
		}, []string{"credentials:"}},
		{"allow_open does not waive the admin token", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.Auth.AllowOpen = true
		}, []string{"admin_token (flag -admin-token"}, []string{"credentials", "client networks", "waive"}},
		{"admin only", func(c *Config) { c.AdminListen = "0.0.0.0:9310" }, []string{
			`admin_listen: "0.0.0.0:9310" is not a loopback address; missing: admin API token`, "env ROBOTSGATE_ADMIN_TOKEN",
		}, []string{"credentials", "client networks", "waive"}},
	} {
		c := Default()
		tc.mutate(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: valid", tc.name)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: %q is not one line", tc.name, msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(msg, w) {
				t.Errorf("%s: %q mentions %q", tc.name, msg, w)
			}
		}
	}
}

func TestCheckAuditDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string // want: "" = accepted
	}{
		{"-", ""},
		{"audit.jsonl", ""}, // the working directory
		{filepath.Join(dir, "audit.jsonl"), ""},
		{filepath.Join(dir, "no", "such", "audit.jsonl"), `audit_log: directory "` + filepath.Join(dir, "no", "such") + `" does not exist`},
		{filepath.Join(file, "audit.jsonl"), "is not a directory"},
		{filepath.Join(file, "sub", "audit.jsonl"), "not a directory"},
	} {
		c := Default()
		c.AuditLog = tc.path
		err := c.CheckAuditDir()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) ||
			!strings.HasSuffix(err.Error(), "(flag -audit-log, env ROBOTSGATE_AUDIT_LOG)")):
			t.Errorf("%s: error %v, want one with %q and the flag", tc.path, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !os.IsNotExist(err) {
		t.Errorf("the check created a directory: %v", err)
	}
}
