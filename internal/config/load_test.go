package config

import (
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots"
	"gopkg.in/yaml.v3"
)

func TestConfigPrecedence(t *testing.T) {
	file := testsupport.WriteFile(t, "c.yaml", "agent: FileBot\nlisten: 127.0.0.1:7001\nmode: report\nrobots:\n  ttl: 2h\n")
	env := map[string]string{"ROBOTSGATE_AGENT": "EnvBot", "ROBOTSGATE_LISTEN": "127.0.0.1:7002"}
	flags := []string{"-config", file, "-agent", "FlagBot"}

	cfg, err := Load(flags, testsupport.EnvMap(env))
	if err != nil {
		t.Fatal(err)
	}
	// flag > env > file > default, per setting.
	if cfg.Agent != "FlagBot" || cfg.Listen != "127.0.0.1:7002" || cfg.Mode != "report" ||
		cfg.Robots.TTL != 2*time.Hour || cfg.Audit != "blocked" {
		t.Fatalf("flag+env+file: agent %q listen %q mode %q ttl %v audit %q", cfg.Agent, cfg.Listen, cfg.Mode, cfg.Robots.TTL, cfg.Audit)
	}
	cfg, _ = Load(flags[:2], testsupport.EnvMap(env))
	if cfg.Agent != "EnvBot" {
		t.Fatalf("env over file: agent %q", cfg.Agent)
	}
	cfg, _ = Load(flags[:2], testsupport.EnvMap(nil))
	if cfg.Agent != "FileBot" || cfg.Listen != "127.0.0.1:7001" {
		t.Fatalf("file over default: agent %q listen %q", cfg.Agent, cfg.Listen)
	}
	cfg, _ = Load(nil, testsupport.EnvMap(nil))
	if def := Default(); cfg.Agent != def.Agent || cfg.Listen != "127.0.0.1:9309" {
		t.Fatalf("defaults: agent %q listen %q", cfg.Agent, cfg.Listen)
	}
	// The config file can come from the environment too; a flag wins.
	cfg, _ = Load(nil, testsupport.EnvMap(map[string]string{"ROBOTSGATE_CONFIG": file}))
	if cfg.Agent != "FileBot" {
		t.Fatalf("ROBOTSGATE_CONFIG: agent %q", cfg.Agent)
	}
	other := testsupport.WriteFile(t, "o.yaml", "agent: OtherFileBot\n")
	cfg, _ = Load([]string{"-config", other}, testsupport.EnvMap(map[string]string{"ROBOTSGATE_CONFIG": file}))
	if cfg.Agent != "OtherFileBot" {
		t.Fatalf("-config over ROBOTSGATE_CONFIG: agent %q", cfg.Agent)
	}
	// Typed options: durations and the nested keys.
	cfg, err = Load([]string{"-shutdown-timeout", "5s", "-https", "tunnel", "-data-dir", "/tmp/x"},
		testsupport.EnvMap(map[string]string{"ROBOTSGATE_ROBOTS_TTL": "3h", "ROBOTSGATE_AUDIT_LOG": "/tmp/a.log"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ShutdownTimeout != 5*time.Second || cfg.HTTPS.Mode != "tunnel" || cfg.HTTPS.DataDir != "/tmp/x" ||
		cfg.Robots.TTL != 3*time.Hour || cfg.AuditLog != "/tmp/a.log" {
		t.Fatalf("typed options: %+v", cfg)
	}
}

func TestEveryOptionHasFlagAndEnv(t *testing.T) {
	def := Default()
	for _, o := range options() {
		if o.flag != "" && o.env() != "ROBOTSGATE_"+strings.ToUpper(strings.ReplaceAll(o.flag, "-", "_")) {
			t.Errorf("%s: env %s", o.flag, o.env())
		}
		// Setting the flag to the default's value must round-trip.
		c := def
		if err := o.set(&c, o.get(&def), nil); err != nil || o.get(&c) != o.get(&def) {
			t.Errorf("%s: %v", o.key, err)
		}
	}
	for _, name := range []string{"listen", "config", "agent", "audit-log", "audit", "mode", "log-level", "admin-listen", "https", "data-dir", "cache"} {
		var given []flagValue
		var path string
		if newFlagSet(&given, &path).Lookup(name) == nil {
			t.Errorf("flag -%s missing", name)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string // in the error
	}{
		{"unknown YAML key", []string{"-config", testsupport.WriteFile(t, "typo.yaml", "listen: 127.0.0.1:1\nlisen: x\n")}, nil, `line 2: unknown key "lisen"`},
		{"unknown nested key", []string{"-config", testsupport.WriteFile(t, "typo2.yaml", "robots:\n  tll: 1h\n")}, nil, `unknown key "tll"`},
		{"bad YAML type", []string{"-config", testsupport.WriteFile(t, "type.yaml", "robots:\n  ttl: 3600\n")}, nil, "line 2"},
		{"missing file", []string{"-config", "/nonexistent/robotsgate.yaml"}, nil, "config file"},
		{"bad mode flag", []string{"-mode", "block"}, nil, `mode: "block" is not one of enforce, report`},
		{"bad env duration", nil, map[string]string{"ROBOTSGATE_SHUTDOWN_TIMEOUT": "soon"}, "ROBOTSGATE_SHUTDOWN_TIMEOUT"},
		{"bad listen", []string{"-listen", "nonsense"}, nil, "listen:"},
		{"bad audit", []string{"-audit", "some"}, nil, "audit:"},
		{"bad log level", []string{"-log-level", "loud"}, nil, "log_level:"},
		{"negative ttl", []string{"-robots-ttl", "-1h"}, nil, "robots.ttl"},
		{"zero shutdown", []string{"-shutdown-timeout", "0s"}, nil, "shutdown_timeout"},
		{"bad agent", []string{"-agent", "My Bot/1"}, nil, "agent:"},
		{"bad allow-agent-override", nil, map[string]string{"ROBOTSGATE_ALLOW_AGENT_OVERRIDE": "sometimes"}, "ROBOTSGATE_ALLOW_AGENT_OVERRIDE"},
		{"unknown flag", []string{"-nope"}, nil, "flags:"},
		{"stray argument", []string{"extra"}, nil, "unexpected argument"},
		{"bad upstream", []string{"-upstream-proxy", "ftp://x"}, nil, "upstream_proxy"},
		{"bad cache", []string{"-cache", "disk"}, nil, "cache:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.args, testsupport.EnvMap(tc.env))
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
	if _, err := Load([]string{"-h"}, testsupport.EnvMap(nil)); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

// exampleConfig is the shipped example configuration.
const exampleConfig = "../../configs/robotsgate.yaml"

func TestExampleConfigLoadsAndIsComplete(t *testing.T) {
	cfg, err := Load([]string{"-config", exampleConfig}, testsupport.EnvMap(nil))
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	// Decoded over a zero Config, the file must reproduce every default.
	var fromFile Config
	if err := loadFile(&fromFile, exampleConfig, FileReader{}); err != nil {
		t.Fatal(err)
	}
	def := Default()
	for _, o := range options() {
		if got, want := o.get(&fromFile), o.get(&def); got != want {
			t.Errorf("example config: %s is %q, Default() %q", o.key, got, want)
		}
		if got, want := o.get(&cfg), o.get(&def); got != want {
			t.Errorf("loading the example changes the default of %s: %q", o.key, got)
		}
	}
	// And name every key, zero defaults included.
	b, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, o := range options() {
		if !hasKey(doc, strings.Split(o.key, ".")) {
			t.Errorf("example config lacks key %s", o.key)
		}
	}
}

func hasKey(m map[string]any, path []string) bool {
	v, ok := m[path[0]]
	if !ok {
		return false
	}
	if len(path) == 1 {
		return true
	}
	sub, ok := v.(map[string]any)
	return ok && hasKey(sub, path[1:])
}

func TestYAMLErrorIsOneLine(t *testing.T) {
	p := testsupport.WriteFile(t, "two.yaml", "lisen: a\nagnet: b\n")
	_, err := Load([]string{"-config", p}, testsupport.EnvMap(nil))
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q: want one line", err)
	}
	if !strings.Contains(err.Error(), `"lisen"`) || !strings.Contains(err.Error(), `"agnet"`) {
		t.Fatalf("error %q should name both keys", err)
	}
}

func TestAllowedPortsOption(t *testing.T) {
	file := testsupport.WriteFile(t, "ports.yaml", "https:\n  allowed_ports: [1443]\n")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []int
	}{
		{"default", nil, nil, []int{80, 443}},
		{"file", []string{"-config", file}, nil, []int{1443}},
		{"env over file", []string{"-config", file}, map[string]string{"ROBOTSGATE_ALLOWED_PORTS": "9443"}, []int{9443}},
		{"flag over env", []string{"-allowed-ports", " 443, 8443 "}, map[string]string{"ROBOTSGATE_ALLOWED_PORTS": "9443"}, []int{443, 8443}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(tc.args, testsupport.EnvMap(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.HTTPS.AllowedPorts, tc.want) {
				t.Fatalf("https.allowed_ports = %v, want %v", cfg.HTTPS.AllowedPorts, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string // all in the error
	}{
		{"not a number", []string{"-allowed-ports", "443,https"}, nil, []string{"flag -allowed-ports", `"https" is not an integer`, "443,8443"}},
		{"bad env", nil, map[string]string{"ROBOTSGATE_ALLOWED_PORTS": "443;8443"}, []string{"ROBOTSGATE_ALLOWED_PORTS", `"443;8443"`}},
		{"out of range", []string{"-allowed-ports", "443,70000"}, nil, []string{"https.allowed_ports", "70000 is not a TCP port"}},
		{"zero", []string{"-allowed-ports", "0"}, nil, []string{"https.allowed_ports", "0 is not a TCP port"}},
		{"empty", []string{"-allowed-ports", " , "}, nil, []string{"https.allowed_ports: empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.args, testsupport.EnvMap(tc.env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	var given []flagValue
	var path string
	if f := newFlagSet(&given, &path).Lookup("allowed-ports"); f == nil || f.DefValue != "80,443" {
		t.Fatalf("flag -allowed-ports: %+v, want default 80,443 shown by -h", f)
	}
}

// TestAgentOptions: the agent is validated by robots.ValidAgent (digits
// are accepted, as robots.txt parsing accepts them), and
// allow_agent_override is off by default and set by YAML, env or flag.
func TestAgentOptions(t *testing.T) {
	for _, agent := range []string{"MJ12bot", "360Spider", "My-Bot_x"} {
		if _, err := Load([]string{"-agent", agent}, testsupport.EnvMap(nil)); err != nil {
			t.Errorf("-agent %s: %v", agent, err)
		}
		file := testsupport.WriteFile(t, "a.yaml", "agent: "+agent+"\n")
		if _, err := Load([]string{"-config", file}, testsupport.EnvMap(nil)); err != nil {
			t.Errorf("agent: %s in YAML: %v", agent, err)
		}
	}
	long := strings.Repeat("A", robots.MaxAgentBytes+1)
	if _, err := Load([]string{"-agent", long}, testsupport.EnvMap(nil)); err == nil || !strings.Contains(err.Error(), "at most 128 bytes") {
		t.Errorf("-agent of %d bytes: %v, want it refused", len(long), err)
	}
	cfg, err := Load(nil, testsupport.EnvMap(nil))
	if err != nil || cfg.AllowAgentOverride {
		t.Fatalf("default allow_agent_override: %v %v", cfg.AllowAgentOverride, err)
	}
	file := testsupport.WriteFile(t, "o.yaml", "agent: MyBot\nallow_agent_override: true\n")
	for _, c := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"-config", file}, nil, true},
		{nil, map[string]string{"ROBOTSGATE_ALLOW_AGENT_OVERRIDE": "true"}, true},
		{[]string{"-allow-agent-override"}, nil, true},
		{[]string{"-config", file, "-allow-agent-override=false"}, nil, false},
		{[]string{"-config", file}, map[string]string{"ROBOTSGATE_ALLOW_AGENT_OVERRIDE": "false"}, false},
	} {
		cfg, err := Load(c.args, testsupport.EnvMap(c.env))
		if err != nil || cfg.AllowAgentOverride != c.want {
			t.Errorf("%v %v: allow_agent_override %v (%v), want %v", c.args, c.env, cfg.AllowAgentOverride, err, c.want)
		}
	}
}
