package proxy

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce/redisfleet"
	"github.com/robotsgate/robotsgate/robots"
)

// Config is robotsgate's whole configuration, as read from YAML (the keys
// below), environment (ROBOTSGATE_<FLAG>) and flags by cmd/robotsgate.
// Default returns the embedded defaults; Validate checks a Config before
// anything listens.
type Config struct {
	Listen      string `yaml:"listen"`       // proxy address, default 127.0.0.1:9309
	AdminListen string `yaml:"admin_listen"` // separate admin address; "" = admin on the proxy port (non-proxy requests)
	AdminToken  string `yaml:"admin_token"`  // bearer token for the admin API; required when admin listens beyond loopback

	Agent       string `yaml:"agent"`        // robots agent (product token) for every request; "" = from User-Agent
	AgentHeader string `yaml:"agent_header"` // per-request override header, stripped before forwarding; default X-Robots-Agent; "-" disables
	Mode        string `yaml:"mode"`         // enforce | report
	Audit       string `yaml:"audit"`        // blocked | all

	// AllowAgentOverride lets the override header replace a configured
	// agent. Off by default: the header is then stripped, ignored and
	// audited (agent_override_refused). Without a configured agent the
	// header is always honoured.
	AllowAgentOverride bool `yaml:"allow_agent_override"`

	AuditLog        string `yaml:"audit_log"`          // path, or "-" for stdout
	AuditMaxSizeMB  int    `yaml:"audit_max_size_mb"`  // rotate the audit file at this size; 0 = never
	AuditMaxBackups int    `yaml:"audit_max_backups"`  // rotated files kept; 0 = all
	AuditMaxAgeDays int    `yaml:"audit_max_age_days"` // rotated files older than this are removed; 0 = never

	LogLevel  string `yaml:"log_level"`  // debug | info | warn | error
	LogFormat string `yaml:"log_format"` // auto | json | console (auto: console on a terminal)

	UpstreamProxy   string        `yaml:"upstream_proxy"`   // forward through this proxy on purpose; "" = direct (HTTP(S)_PROXY is ignored)
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"` // bound for in-flight requests at SIGINT/SIGTERM, default 30s

	Cache string `yaml:"cache"` // memory | redis://host:port/db

	Robots     RobotsConfig     `yaml:"robots"`
	HTTPS      HTTPSConfig      `yaml:"https"`
	Politeness PolitenessConfig `yaml:"politeness"`
	RobotTags  RobotTagsConfig  `yaml:"robot_tags"`
	Auth       AuthConfig       `yaml:"auth"`
}

// RobotsConfig is how robots.txt is fetched and cached.
type RobotsConfig struct {
	UserAgent         string        `yaml:"user_agent"`         // User-Agent of robots.txt fetches
	FetchTimeout      time.Duration `yaml:"fetch_timeout"`      // default 10s
	MaxBytes          int           `yaml:"max_bytes"`          // default 512000 (500 KiB)
	MaxRedirects      int           `yaml:"max_redirects"`      // default 5
	TTL               time.Duration `yaml:"ttl"`                // default 24h
	MinTTL            time.Duration `yaml:"min_ttl"`            // lower clamp of Cache-Control max-age, default 1m
	UnreachableWindow time.Duration `yaml:"unreachable_window"` // default 720h (30 days)
	RetryMin          time.Duration `yaml:"retry_min"`          // first re-fetch after a failure, default 1m
	RetryMax          time.Duration `yaml:"retry_max"`          // cap of the re-fetch backoff, default 1h
	MaxEntries        int           `yaml:"max_entries"`        // origins kept in the in-process cache (soonest to expire evicted), default 100000
	MaxCacheMB        int           `yaml:"max_cache_mb"`       // estimated memory bound of that cache in MiB (1 KiB + 14 × body per entry), default 512
}

// HTTPSConfig is how CONNECT requests are handled.
type HTTPSConfig struct {
	Mode          string   `yaml:"mode"`           // mitm | tunnel
	AllowedPorts  []int    `yaml:"allowed_ports"`  // CONNECT only to these ports, default [443]
	DataDir       string   `yaml:"data_dir"`       // where the generated CA lives; default under the user's config dir
	CACert        string   `yaml:"ca_cert"`        // use this CA certificate (PEM) instead of the generated one
	CAKey         string   `yaml:"ca_key"`         // ... and its key (PEM)
	UpstreamRoots []string `yaml:"upstream_roots"` // extra PEM files of roots trusted for upstream TLS (besides the system roots)
}

// PolitenessConfig is crawl-delay pacing and backoff.
type PolitenessConfig struct {
	CrawlDelay        string        `yaml:"crawl_delay"`         // honor | ignore
	DefaultCrawlDelay time.Duration `yaml:"default_crawl_delay"` // for origins that state none; 0 = none
	MaxCrawlDelay     time.Duration `yaml:"max_crawl_delay"`     // larger delays are clamped to this, default 60s
	MaxQueueWait      time.Duration `yaml:"max_queue_wait"`      // longer waits get 429 + Retry-After, default 30s
	BackoffStart      time.Duration `yaml:"backoff_start"`       // pause after a 503/429 without Retry-After, default 30s; doubles
	BackoffMax        time.Duration `yaml:"backoff_max"`         // cap of pauses (also of Retry-After), default 1h
	MaxConcurrency    int           `yaml:"max_concurrency"`     // per-origin in-flight limit; 0 = off
}

// RobotTagsConfig is X-Robots-Tag / meta robots handling.
type RobotTagsConfig struct {
	Mode         string   `yaml:"mode"`           // off | annotate | enforce
	Deny         []string `yaml:"deny"`           // directives meaning "do not keep", default [noindex, none]
	MaxScanBytes int      `yaml:"max_scan_bytes"` // how much of an HTML body is scanned for meta tags, default 65536
}

// AuthConfig is access control to the proxy.
type AuthConfig struct {
	Credentials     []string `yaml:"credentials"`      // "user:password" pairs for Proxy-Authorization: Basic
	CredentialsFile string   `yaml:"credentials_file"` // file of "user:password" lines
	AllowCIDRs      []string `yaml:"allow_cidrs"`      // client networks allowed; empty = any
	AllowOpen       bool     `yaml:"allow_open"`       // permit a non-loopback listen address without auth or CIDRs
}

// Default returns the embedded default configuration.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:9309",
		AgentHeader:     "X-Robots-Agent",
		Mode:            "enforce",
		Audit:           "blocked",
		AuditLog:        "-",
		LogLevel:        "info",
		LogFormat:       "auto",
		ShutdownTimeout: 30 * time.Second,
		Cache:           "memory",
		Robots: RobotsConfig{
			UserAgent:         "robotsgate/1.0 (+https://github.com/robotsgate/robotsgate)",
			FetchTimeout:      10 * time.Second,
			MaxBytes:          500 << 10,
			MaxRedirects:      5,
			TTL:               24 * time.Hour,
			MinTTL:            time.Minute,
			UnreachableWindow: 30 * 24 * time.Hour,
			RetryMin:          time.Minute,
			RetryMax:          time.Hour,
			MaxEntries:        100000,
			MaxCacheMB:        512,
		},
		HTTPS: HTTPSConfig{
			Mode:         "mitm",
			AllowedPorts: []int{443},
		},
		Politeness: PolitenessConfig{
			CrawlDelay:    "honor",
			MaxCrawlDelay: 60 * time.Second,
			MaxQueueWait:  30 * time.Second,
			BackoffStart:  30 * time.Second,
			BackoffMax:    time.Hour,
		},
		RobotTags: RobotTagsConfig{
			Mode:         "annotate",
			Deny:         []string{"noindex", "none"},
			MaxScanBytes: 64 << 10,
		},
	}
}

// Validate reports the first problem of c as an error naming the key.
// Each section has its own check; a helper adding a section adds one line.
func (c *Config) Validate() error {
	if err := c.validateProxy(); err != nil { // listen, agent, mode, audit, logging, shutdown, cache
		return err
	}
	if err := c.validateRobots(); err != nil { // robots:
		return err
	}
	if err := c.validateAccess(); err != nil { // issue 6: auth, admin, audit rotation (proxy/auth.go)
		return err
	}
	if err := c.validateHTTPS(); err != nil { // issue 4: https: (proxy/connect.go)
		return err
	}
	if err := c.validatePoliteness(); err != nil { // issue 5: politeness: (proxy/politeness.go)
		return err
	}
	if err := c.validateRobotTags(); err != nil { // issue 5: robot_tags: (proxy/robottags.go)
		return err
	}
	return nil
}

// validateProxy checks the top-level keys of the proxy itself.
func (c *Config) validateProxy() error {
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not host:port: %w", c.Listen, err)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("listen: %q: port %q is not a number 0-65535", c.Listen, port)
	}
	if c.Agent != "" && !robots.ValidAgent(c.Agent) {
		return fmt.Errorf("agent: %q is not a product token (letters, digits, '_' and '-' only, e.g. MyBot or MJ12bot)", c.Agent)
	}
	if c.AgentHeader != "" && c.AgentHeader != "-" && !isHeaderName(c.AgentHeader) {
		return fmt.Errorf("agent_header: %q is not a header name (or \"-\" to disable)", c.AgentHeader)
	}
	if err := oneOf("mode", c.Mode, "enforce", "report"); err != nil {
		return err
	}
	if err := oneOf("audit", c.Audit, "blocked", "all"); err != nil {
		return err
	}
	if c.AuditLog == "" {
		return errors.New("audit_log: empty (a file path, or \"-\" for stdout)")
	}
	if err := oneOf("log_level", c.LogLevel, "debug", "info", "warn", "error"); err != nil {
		return err
	}
	if err := oneOf("log_format", c.LogFormat, "auto", "json", "console"); err != nil {
		return err
	}
	if c.UpstreamProxy != "" {
		if _, err := parseUpstreamProxy(c.UpstreamProxy); err != nil {
			return err
		}
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("shutdown_timeout: %v is not positive", c.ShutdownTimeout)
	}
	if c.Cache != "memory" {
		if !strings.HasPrefix(c.Cache, "redis://") && !strings.HasPrefix(c.Cache, "rediss://") {
			return errors.New(`cache: neither "memory" nor a redis:// or rediss:// URL`)
		}
		if err := redisfleet.ValidateRedisURL(c.Cache); err != nil { // [redis]
			return fmt.Errorf("cache: %w", err)
		}
	}
	return nil
}

// validateRobots checks the robots: section.
func (c *Config) validateRobots() error {
	r := &c.Robots
	if strings.TrimSpace(r.UserAgent) == "" || strings.ContainsAny(r.UserAgent, "\r\n") {
		return fmt.Errorf("robots.user_agent: %q must be a non-empty single line", r.UserAgent)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"robots.fetch_timeout", r.FetchTimeout}, {"robots.ttl", r.TTL}, {"robots.min_ttl", r.MinTTL},
		{"robots.unreachable_window", r.UnreachableWindow}, {"robots.retry_min", r.RetryMin}, {"robots.retry_max", r.RetryMax},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s: %v is not positive", d.key, d.v)
		}
	}
	switch {
	case r.MinTTL > r.TTL:
		return fmt.Errorf("robots.min_ttl: %v exceeds robots.ttl (%v)", r.MinTTL, r.TTL)
	case r.RetryMin > r.RetryMax:
		return fmt.Errorf("robots.retry_min: %v exceeds robots.retry_max (%v)", r.RetryMin, r.RetryMax)
	case r.MaxBytes < 500<<10:
		return fmt.Errorf("robots.max_bytes: %d is below RFC 9309's minimum of 512000 (500 KiB)", r.MaxBytes)
	case r.MaxRedirects < 0:
		return fmt.Errorf("robots.max_redirects: %d is negative", r.MaxRedirects)
	case r.MaxEntries <= 0:
		return fmt.Errorf("robots.max_entries: %d is not positive (the cache is always bounded)", r.MaxEntries)
	case r.MaxCacheMB <= 0 || r.MaxCacheMB > 1<<30:
		return fmt.Errorf("robots.max_cache_mb: %d is not between 1 and %d (the cache is always bounded)", r.MaxCacheMB, 1<<30)
	}
	return nil
}

// oneOf checks that key's value v is one of allowed.
func oneOf(key, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("%s: %q is not one of %s", key, v, strings.Join(allowed, ", "))
}

// isHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func isHeaderName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return s != ""
}
