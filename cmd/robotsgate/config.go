package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/robotsgate/robotsgate/proxy"
)

// envPrefix prefixes the environment variable of every option:
// ROBOTSGATE_<NAME>, NAME being the flag name upper-cased with '-' → '_'.
const envPrefix = "ROBOTSGATE_"

// option is a setting available as a flag, an environment variable and
// (through proxy.Config's YAML keys) in the config file.
type option struct {
	name  string // flag name, e.g. "audit-log"
	key   string // YAML key, e.g. "audit_log", for the docs
	usage string
	// field returns the setting's field in c: a *string, *int,
	// *time.Duration, *bool, *[]string or *[]int (lists are
	// comma-separated).
	field func(c *proxy.Config) any
}

// envName returns the option's environment variable.
func (o option) envName() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(o.name, "-", "_"))
}

// set parses v into o's field of c.
func (o option) set(c *proxy.Config, v string) error {
	switch p := o.field(c).(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (e.g. 30s, 5m, 24h)", v)
		}
		*p = d
	case *bool: // [ops] allow-open
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", v)
		}
		*p = b
	case *[]string: // [ops] allow-cidrs: comma-separated
		*p = splitList(v)
	case *[]int: // [https] allowed-ports: comma-separated
		*p = nil
		for _, s := range splitList(v) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("%q is not an integer (want comma-separated port numbers, e.g. 443,8443)", s)
			}
			*p = append(*p, n)
		}
	default:
		return fmt.Errorf("option %s: unsupported field type %T", o.name, p)
	}
	return nil
}

// get formats o's field of c.
func (o option) get(c *proxy.Config) string {
	switch p := o.field(c).(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *time.Duration:
		return p.String()
	case *bool:
		return strconv.FormatBool(*p)
	case *[]string:
		return strings.Join(*p, ",")
	case *[]int:
		s := make([]string, len(*p))
		for i, n := range *p {
			s[i] = strconv.Itoa(n)
		}
		return strings.Join(s, ",")
	}
	return ""
}

// splitList splits a comma-separated list, trimming spaces and dropping
// empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// options returns the settings of serve, in the order -h lists them. To
// add one, add a line.
func options() []option {
	return []option{
		{"listen", "listen", "proxy address `host:port`", func(c *proxy.Config) any { return &c.Listen }},
		{"agent", "agent", "robots agent (product `token`) for every request; empty = from each request's User-Agent", func(c *proxy.Config) any { return &c.Agent }},
		{"agent-header", "agent_header", "request `header` that overrides the agent per request (stripped before forwarding); - disables", func(c *proxy.Config) any { return &c.AgentHeader }},
		{"allow-agent-override", "allow_agent_override", "let the agent override header replace a configured -agent (otherwise it is stripped, ignored and audited)", func(c *proxy.Config) any { return &c.AllowAgentOverride }},
		{"mode", "mode", "`mode`: enforce (refuse disallowed URLs) or report (decide and audit, forward everything)", func(c *proxy.Config) any { return &c.Mode }},
		{"audit", "audit", "which decisions are audited (`level`): blocked or all", func(c *proxy.Config) any { return &c.Audit }},
		{"audit-log", "audit_log", "audit log `path`, - for stdout", func(c *proxy.Config) any { return &c.AuditLog }},
		{"audit-max-size-mb", "audit_max_size_mb", "rotate the audit file at this size in `MB`; 0 = never", func(c *proxy.Config) any { return &c.AuditMaxSizeMB }},
		{"log-level", "log_level", "operator log `level`: debug, info, warn or error", func(c *proxy.Config) any { return &c.LogLevel }},
		{"log-format", "log_format", "operator log `format` on stderr: auto (console on a terminal, else JSON), json or console", func(c *proxy.Config) any { return &c.LogFormat }},
		{"admin-listen", "admin_listen", "separate admin API address `host:port`; empty = on the proxy port", func(c *proxy.Config) any { return &c.AdminListen }},
		{"admin-token", "admin_token", "bearer `token` of the admin API (prefer the environment variable)", func(c *proxy.Config) any { return &c.AdminToken }},
		{"audit-max-backups", "audit_max_backups", "rotated audit files kept; 0 = all", func(c *proxy.Config) any { return &c.AuditMaxBackups }},
		{"audit-max-age-days", "audit_max_age_days", "rotated audit files older than this many days are removed; 0 = never", func(c *proxy.Config) any { return &c.AuditMaxAgeDays }},
		{"credentials-file", "auth.credentials_file", "`file` of user:password lines: clients must send Proxy-Authorization: Basic", func(c *proxy.Config) any { return &c.Auth.CredentialsFile }},
		{"allow-cidrs", "auth.allow_cidrs", "comma-separated client networks allowed to use the proxy; empty = any", func(c *proxy.Config) any { return &c.Auth.AllowCIDRs }},
		{"allow-open", "auth.allow_open", "waive the requirement that a non-loopback listen address has both credentials and allow_cidrs (configured ones still apply)", func(c *proxy.Config) any { return &c.Auth.AllowOpen }},
		{"https", "https.mode", "CONNECT handling `mode`: mitm (enforce paths) or tunnel (host only)", func(c *proxy.Config) any { return &c.HTTPS.Mode }},
		{"allowed-ports", "https.allowed_ports", "comma-separated `ports` CONNECT may reach, e.g. 443,8443", func(c *proxy.Config) any { return &c.HTTPS.AllowedPorts }}, // [https]
		{"data-dir", "https.data_dir", "`dir`ectory of the generated CA; empty = under the user's config dir", func(c *proxy.Config) any { return &c.HTTPS.DataDir }},
		{"ca-cert", "https.ca_cert", "custom MITM CA certificate `file` (PEM) instead of the generated CA; needs -ca-key", func(c *proxy.Config) any { return &c.HTTPS.CACert }},       // [https]
		{"ca-key", "https.ca_key", "private key `file` (PEM, mode 0600) of -ca-cert", func(c *proxy.Config) any { return &c.HTTPS.CAKey }},                                             // [https]
		{"upstream-roots", "https.upstream_roots", "comma-separated PEM `files` of extra roots trusted for upstream TLS", func(c *proxy.Config) any { return &c.HTTPS.UpstreamRoots }}, // [https]
		{"cache", "cache", "robots.txt `cache`: memory or redis://host:port/db", func(c *proxy.Config) any { return &c.Cache }},
		{"upstream-proxy", "upstream_proxy", "forward through this proxy `URL`; empty = direct (HTTP(S)_PROXY is ignored)", func(c *proxy.Config) any { return &c.UpstreamProxy }},
		{"max-url-bytes", "max_url_bytes", "request URLs longer than this many `bytes` are answered 414 without being decided", func(c *proxy.Config) any { return &c.MaxURLBytes }},
		{"shutdown-timeout", "shutdown_timeout", "bound (`duration`) for in-flight requests at SIGINT/SIGTERM", func(c *proxy.Config) any { return &c.ShutdownTimeout }},
		{"robots-user-agent", "robots.user_agent", "`User-Agent` of robots.txt fetches", func(c *proxy.Config) any { return &c.Robots.UserAgent }},
		{"robots-ttl", "robots.ttl", "robots.txt cache lifetime (`duration`)", func(c *proxy.Config) any { return &c.Robots.TTL }},
		{"robots-fetch-timeout", "robots.fetch_timeout", "bound of one robots.txt fetch (`duration`)", func(c *proxy.Config) any { return &c.Robots.FetchTimeout }},
	}
}

// configOption is the -config flag: the YAML file read before the
// environment and flags are applied.
var configOption = option{name: "config", usage: "YAML configuration `file` (see configs/robotsgate.yaml)"}

// flagValue is a flag given on the command line.
type flagValue struct {
	opt   option
	value string
}

// newServeFlags returns serve's flag set; given collects the flags set, in
// order, and configPath receives -config.
func newServeFlags(given *[]flagValue, configPath *string) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(configPath, configOption.name, "", configOption.usage+" (env "+configOption.envName()+")")
	def := proxy.Default()
	for _, o := range options() {
		usage := fmt.Sprintf("%s (env %s, YAML %s)", o.usage, o.envName(), o.key)
		record := func(v string) error {
			*given = append(*given, flagValue{opt: o, value: v})
			return nil
		}
		if _, ok := o.field(&def).(*bool); ok {
			fs.BoolFunc(o.name, usage, record) // -allow-open alone means true
		} else {
			fs.Func(o.name, usage, record)
		}
		fs.Lookup(o.name).DefValue = o.get(&def) // shown by -h
	}
	return fs
}

// serveFlagUsage prints serve's flags.
func serveFlagUsage(w io.Writer) {
	var given []flagValue
	var path string
	fs := newServeFlags(&given, &path)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// loadConfig builds the configuration of serve from, by precedence, flags
// > environment (ROBOTSGATE_<NAME>) > the YAML file (-config or
// ROBOTSGATE_CONFIG) > proxy.Default, and validates it. It returns
// flag.ErrHelp for -h. Errors are single lines naming the setting.
func loadConfig(args []string, env func(string) string) (proxy.Config, error) {
	var given []flagValue
	var path string
	fs := newServeFlags(&given, &path)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return proxy.Config{}, err
		}
		return proxy.Config{}, fmt.Errorf("flags: %w", err)
	}
	if fs.NArg() > 0 {
		return proxy.Config{}, fmt.Errorf("flags: unexpected argument %q", fs.Arg(0))
	}
	pathSet := false
	fs.Visit(func(f *flag.Flag) { pathSet = pathSet || f.Name == configOption.name })
	if !pathSet {
		path = env(configOption.envName())
	}

	cfg := proxy.Default()
	if path != "" {
		if err := loadFile(&cfg, path); err != nil {
			return proxy.Config{}, err
		}
	}
	for _, o := range options() {
		if v, ok := lookupEnv(env, o.envName()); ok {
			if err := o.set(&cfg, v); err != nil {
				return proxy.Config{}, fmt.Errorf("%s: %w", o.envName(), err)
			}
		}
	}
	for _, g := range given {
		if err := g.opt.set(&cfg, g.value); err != nil {
			return proxy.Config{}, fmt.Errorf("flag -%s: %w", g.opt.name, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return proxy.Config{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// lookupEnv returns the value of the environment variable name; an unset
// or empty variable counts as absent.
func lookupEnv(env func(string) string, name string) (string, bool) {
	v := env(name)
	return v, v != ""
}

// loadFile decodes the YAML file at path over cfg, strictly: an unknown
// key is an error naming it and its line.
func loadFile(cfg *proxy.Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config file %s: %s", path, yamlError(err))
	}
	return nil
}

var (
	yamlUnknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)
	yamlSpaces       = regexp.MustCompile(`\s*\n\s*`)
)

// yamlError turns yaml.v3's (multi-line) error into one line, e.g.
// `line 3: unknown key "lisen"`.
func yamlError(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:")
	s = yamlUnknownField.ReplaceAllString(s, `unknown key "$1"`)
	s = yamlSpaces.ReplaceAllString(strings.TrimSpace(s), "; ")
	return s
}
