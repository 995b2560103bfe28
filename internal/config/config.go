// Package config is robotsgate's configuration: the Config type, its
// defaults, how it is loaded (YAML file, environment, flags) and how it is
// validated. It is the only place defaults live; the packages that use a
// setting are given its value explicitly.
//
// Every setting is one row of the option table (options.go), which drives
// the YAML keys, the flags, the environment variables and the generated
// reference docs/configuration.md.
package config

import (
	"net/netip"
	"net/url"
	"time"

	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// Config is robotsgate's whole configuration. Values are parsed once,
// into types, by Load; Validate checks them.
type Config struct {
	Listen      string // proxy address host:port
	AdminListen string // separate admin address; "" = admin on the proxy port
	AdminToken  string // bearer token of the admin API
	// AdminHosts are the names (or addresses) besides the admin
	// listener's own address and localhost that a request to the admin
	// API may give as its Host (admin_hosts.go).
	AdminHosts []string

	Agent              string // robots agent (product token) for every request; "" = from User-Agent
	AgentHeader        string // per-request override header; "-" disables
	AllowAgentOverride bool   // the override header may replace a configured agent
	Mode               Mode   // enforce | report
	// Purposes are what the crawlers use content for (train-ai, search,
	// ai-input, ai-use); none: usage preferences are reported, never
	// enforced.
	Purposes aipref.Set
	// ContentUse is what the crawlers keep and re-share (Content Signals
	// "use": immediate, reference or full): a URL whose site states a
	// lower level is refused; UseUnknown (""): levels are only reported.
	ContentUse aipref.Use
	Audit      AuditLevel // blocked | all

	AuditLog        string // path, or "-" for stdout
	AuditMaxSizeMB  int    // rotate at this size; 0 = never
	AuditMaxBackups int    // rotated files kept; 0 = all
	AuditMaxAgeDays int    // rotated files older than this are removed; 0 = never
	// AuditDigestInterval is the interval between signed digest records
	// in the audit log; 0 = only at rotation and shutdown.
	AuditDigestInterval time.Duration
	// AuditKey is the Ed25519 private key file that signs the digests;
	// "" = signing.key's, unsigned when that is empty too.
	AuditKey string

	LogLevel  string // debug | info | warn | error
	LogFormat string // auto | json | console

	UpstreamProxy   *url.URL      // forward through this proxy; nil = direct
	ShutdownTimeout time.Duration // bound for in-flight requests at shutdown
	MaxURLBytes     int           // longer request URLs are answered 414 without being decided

	Cache string // memory | redis://… | rediss://…

	Client     ClientConfig
	Robots     RobotsConfig
	Upstream   UpstreamConfig
	HTTPS      HTTPSConfig
	Politeness PolitenessConfig
	RobotTags  RobotTagsConfig
	Usage      UsageConfig
	TDMRep     TDMRepConfig
	License    LicenseConfig // RSL licenses (license.go)
	Signing    SigningConfig // Web Bot Auth request signatures (signing.go)
	Auth       AuthConfig
	Egress     EgressConfig  // destination addresses reached (egress.go)
	Payment    PaymentConfig // HTTP 402 pay-per-crawl (payment.go)
	// Transparent is the listener of redirected connections (transparent
	// sidecar).
	Transparent TransparentConfig
	// Sites are the per-site exceptions (sites.go), in file order.
	Sites []Site
	// ReloadAllowEmpty lets a reload apply a configuration file that
	// holds no setting; otherwise such a reload is refused, as a file
	// caught while it is rewritten.
	ReloadAllowEmpty bool

	// Volume is the crawl report's volume records, Crawler what
	// robotsgate publish writes about the crawler (crawler.go).
	Volume  VolumeConfig
	Crawler CrawlerConfig

	// emptyFile: the configuration file, read by Load, held no setting.
	emptyFile bool

	// keysOnly is set while a configuration loaded by [LoadKeys] is
	// validated: signing.agent may be empty.
	keysOnly bool
}

// EmptyFile reports whether the configuration file Load read held no
// setting (it was empty, or only comments): a file caught between being
// truncated and written again reads so. False without a file.
func (c *Config) EmptyFile() bool { return c.emptyFile }

// TransparentConfig is the transparent listener: connections the kernel
// redirected to robotsgate (iptables REDIRECT) from clients without proxy
// settings.
type TransparentConfig struct {
	Listen string // host:port; "" = off
}

// UsageConfig is what usage preferences (Content-Usage, Content-Signal,
// noai) do for the declared purposes.
type UsageConfig struct {
	Unknown       UsageUnknown  // allow | deny: a declared purpose with no stated preference
	Response      UsageResponse // annotate | enforce: a response header or tag that disallows a declared purpose
	PurposeHeader string        // per-request purposes header; "-" disables
}

// ClientConfig bounds what a client may send and how long it may take:
// the proxy listener's [http.Server] and every request read inside a
// CONNECT session use the same values.
type ClientConfig struct {
	MaxHeaderBytes int           // a longer request head is answered 431
	HeaderTimeout  time.Duration // bound of reading one request head
	IdleTimeout    time.Duration // silence allowed between requests (and, in a session, while a request runs)
}

// RobotsConfig is how robots.txt is fetched and cached.
type RobotsConfig struct {
	UserAgent         string
	FetchTimeout      time.Duration
	MaxBytes          int
	MaxRedirects      int // redirects followed; 0 = none
	TTL               time.Duration
	MinTTL            time.Duration
	UnreachableWindow time.Duration
	RetryMin          time.Duration
	RetryMax          time.Duration
	MaxEntries        int
	MaxCacheMB        int
	DocumentsMB       int // disk bound of the documents kept; 0 keeps none
}

// HTTPSConfig is how CONNECT requests are handled.
type HTTPSConfig struct {
	Mode          HTTPSMode // mitm | tunnel
	AllowedPorts  []int
	DataDir       string
	CACert        string
	CAKey         string
	UpstreamRoots []string
}

// PolitenessConfig is crawl-delay pacing and backoff.
type PolitenessConfig struct {
	CrawlDelay        CrawlDelayPolicy // honor | ignore
	DefaultCrawlDelay time.Duration
	MaxCrawlDelay     time.Duration
	MaxQueueWait      time.Duration
	BackoffStart      time.Duration
	BackoffMax        time.Duration
	MaxConcurrency    int
}

// RobotTagsConfig is X-Robots-Tag / meta robots handling.
type RobotTagsConfig struct {
	Mode         RobotTagsMode // off | annotate | enforce
	Deny         []string
	MaxScanBytes int
}

// AuthConfig is access control to the proxy.
type AuthConfig struct {
	Credentials     []string // "user:password" pairs
	CredentialsFile string
	AllowCIDRs      []netip.Prefix // client networks allowed; empty = any
	AllowOpen       bool
}

// Default returns the default configuration: what robotsgate runs with
// when no file, environment variable or flag says otherwise.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:9309",
		AgentHeader:     "X-Robots-Agent",
		Mode:            ModeEnforce,
		Audit:           AuditBlocked,
		AuditLog:        "-",
		LogLevel:        "info",
		LogFormat:       "auto",
		ShutdownTimeout: 30 * time.Second,
		MaxURLBytes:     16 << 10,
		Cache:           "memory",
		Client: ClientConfig{
			MaxHeaderBytes: 1 << 20,
			HeaderTimeout:  30 * time.Second,
			IdleTimeout:    120 * time.Second,
		},
		Robots: defaultRobots(),

		AuditDigestInterval: 5 * time.Minute,

		Upstream: UpstreamConfig{
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 64,
			IdleTimeout:         90 * time.Second,
			FirstIdleTimeout:    5 * time.Second,
		},
		HTTPS: HTTPSConfig{
			Mode:         HTTPSModeMITM,
			AllowedPorts: []int{80, 443}, // 80: Node's undici and https-proxy-agent tunnel http:// URLs too
		},
		Politeness: PolitenessConfig{
			CrawlDelay:    CrawlDelayHonor,
			MaxCrawlDelay: 60 * time.Second,
			MaxQueueWait:  30 * time.Second,
			BackoffStart:  30 * time.Second,
			BackoffMax:    time.Hour,
		},
		Usage: UsageConfig{
			Unknown:       UsageUnknownAllow,
			Response:      UsageResponseAnnotate,
			PurposeHeader: "X-Robots-Purpose",
		},
		TDMRep: TDMRepConfig{
			Mode:     TDMRepReport,
			Purposes: defaultTDMPurposes(),
		},
		License: LicenseConfig{Mode: LicenseReport},
		Payment: PaymentConfig{Mode: PaymentOff},
		Signing: defaultSigning(),
		RobotTags: RobotTagsConfig{
			Mode:         RobotTagsAnnotate,
			Deny:         robottag.DefaultDeny(),
			MaxScanBytes: 64 << 10,
		},
		Volume: VolumeConfig{Interval: defaultVolumeInterval, MaxOrigins: defaultVolumeMaxOrigins},
	}
}

// defaultRobots is the default robots: section.
func defaultRobots() RobotsConfig {
	return RobotsConfig{
		UserAgent:         "robotsgate/1.0 (+https://github.com/robotsgate/robotsgate)",
		FetchTimeout:      10 * time.Second,
		MaxBytes:          minRobotsBytes,
		MaxRedirects:      5,
		TTL:               24 * time.Hour,
		MinTTL:            time.Minute,
		UnreachableWindow: 30 * 24 * time.Hour,
		RetryMin:          time.Minute,
		RetryMax:          time.Hour,
		MaxEntries:        1000000,
		MaxCacheMB:        512,
		DocumentsMB:       256,
	}
}

// minRobotsBytes is RFC 9309's minimum of robots.txt bytes a crawler
// must parse (500 KiB), the default and the lower bound of
// robots.max_bytes.
const minRobotsBytes = 500 << 10
