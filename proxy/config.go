package proxy

import "time"

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
func (c *Config) Validate() error {
	// TODO(proxy): every section; helpers add checks for their own section.
	return nil
}
