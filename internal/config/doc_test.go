package config

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestConfigurationDocIsCurrent: docs/configuration.md is what the option
// table generates; run "go generate ./internal/config" after changing it.
func TestConfigurationDocIsCurrent(t *testing.T) {
	got, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Markdown()) {
		t.Fatal(`docs/configuration.md is stale: run "go generate ./internal/config"`)
	}
	// Every option is in it, with its flag and environment variable.
	for _, o := range options() {
		row := "| `" + o.key + "` | "
		if o.flag != "" {
			row += "`-" + o.flag + "` | `" + o.env() + "` |"
		}
		if !strings.Contains(string(got), row) {
			t.Errorf("docs/configuration.md lacks the row %q", row)
		}
	}
}

// TestSameErrorFromEverySource: a bad value reads the same whether it
// comes from the YAML file, the environment or a flag.
func TestSameErrorFromEverySource(t *testing.T) {
	const want = `"soon" is not a duration (e.g. 30s, 5m, 24h)`
	file := testsupport.WriteFile(t, "d.yaml", "shutdown_timeout: soon\n")
	for name, load := range map[string]func() error{
		"yaml": func() error { _, err := Load([]string{"-config", file}, testsupport.EnvMap(nil)); return err },
		"env": func() error {
			_, err := Load(nil, testsupport.EnvMap(map[string]string{"ROBOTSGATE_SHUTDOWN_TIMEOUT": "soon"}))
			return err
		},
		"flag": func() error {
			_, err := Load([]string{"-shutdown-timeout", "soon"}, testsupport.EnvMap(nil))
			return err
		},
	} {
		err := load()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "shutdown_timeout") {
			t.Errorf("%s: error %v, want one naming shutdown_timeout and saying %s", name, err, want)
		}
	}
	// Also in a nested section, a list and a YAML-only key.
	for yaml, want := range map[string]string{
		"robots:\n  ttl: 3600\n":                     `line 2: robots.ttl: "3600" is not a duration`,
		"https:\n  allowed_ports: [443, https]\n":    `line 2: https.allowed_ports[1]: "https" is not an integer`,
		"politeness:\n  max_concurrency: many\n":     `line 2: politeness.max_concurrency: "many" is not an integer`,
		"listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n": `line 2: key "listen" repeated`,
		"robots: 5\n":                  `line 1: robots is not a mapping`,
		"auth:\n  allow_open: maybe\n": `"maybe" is not a boolean (true or false)`,
	} {
		_, err := Load([]string{"-config", testsupport.WriteFile(t, "x.yaml", yaml)}, testsupport.EnvMap(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
}

// TestValidateNamesFlagAndEnv: a value that parses but is invalid is
// reported with its key, flag and environment variable.
func TestValidateNamesFlagAndEnv(t *testing.T) {
	_, err := Load([]string{"-robots-ttl", "-1h"}, testsupport.EnvMap(nil))
	want := "robots.ttl: -1h0m0s is not positive (flag -robots-ttl, env ROBOTSGATE_ROBOTS_TTL)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
