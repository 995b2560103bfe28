package config

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestValidateOpenProxy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		wantErr string // "" = valid
	}{
		{"default loopback", func(c *Config) {}, ""},
		{"localhost", func(c *Config) { c.Listen = "localhost:9309" }, ""},
		{"ipv6 loopback", func(c *Config) { c.Listen = "[::1]:9309" }, ""},
		{"open on all interfaces", func(c *Config) { c.Listen = "0.0.0.0:9309"; c.AdminToken = "t" }, "allow_open"},
		{"open on empty host", func(c *Config) { c.Listen = ":9309"; c.AdminToken = "t" }, "not a loopback address"},
		{"open on ::", func(c *Config) { c.Listen = "[::]:9309"; c.AdminToken = "t" }, "allow_open"},
		{"allow_open", func(c *Config) { c.Listen = "0.0.0.0:9309"; c.AdminToken = "t"; c.Auth.AllowOpen = true }, ""},
		// Beyond loopback both credentials and client networks are
		// required, each turned off only explicitly.
		{"neither names both", func(c *Config) { c.Listen = "0.0.0.0:9309"; c.AdminToken = "t" }, "missing: credentials: auth.credentials or auth.credentials_file (flag -credentials-file, env ROBOTSGATE_CREDENTIALS_FILE); client networks"},
		{"credentials only", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.Credentials = []string{"a:b"}
		}, "missing: client networks"},
		{"credentials file only", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.CredentialsFile = "/run/secrets/creds"
		}, "missing: client networks"},
		{"cidrs only", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.AllowCIDRs = cidrs(t, "172.16.0.0/12")
		}, "missing: credentials"},
		{"credentials and cidrs", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.CredentialsFile = "/run/secrets/creds"
			c.Auth.AllowCIDRs = cidrs(t, "172.16.0.0/12")
		}, ""},
		{"credentials, any network explicitly", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.Credentials = []string{"a:b"}
			c.Auth.AllowCIDRs = cidrs(t, "0.0.0.0/0", "::/0")
		}, ""},
		{"cidrs, credentials waived by allow_open", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.AdminToken = "t"
			c.Auth.AllowCIDRs = cidrs(t, "172.16.0.0/12")
			c.Auth.AllowOpen = true
		}, ""},
		{"admin on proxy port beyond loopback needs a token", func(c *Config) { c.Listen = "0.0.0.0:9309"; c.Auth.AllowOpen = true }, "admin_token"},
		{"separate loopback admin needs no token", func(c *Config) {
			c.Listen = "0.0.0.0:9309"
			c.Auth.AllowOpen = true
			c.AdminListen = "127.0.0.1:9310"
		}, ""},
		{"admin beyond loopback needs a token", func(c *Config) { c.AdminListen = "0.0.0.0:9310" }, "admin_token"},
		{"admin beyond loopback with a token", func(c *Config) { c.AdminListen = "0.0.0.0:9310"; c.AdminToken = "t" }, ""},
		{"bad admin address", func(c *Config) { c.AdminListen = "nope" }, "admin_listen"},
		{"bad credential", func(c *Config) { c.Auth.Credentials = []string{"nocolon"} }, "auth.credentials[0]"},
		{"negative rotation", func(c *Config) { c.AuditLog = "/x/a.log"; c.AuditMaxSizeMB = -1 }, "audit_max_size_mb"},
		{"negative backups", func(c *Config) { c.AuditMaxBackups = -1 }, "audit_max_backups"},
		{"negative age", func(c *Config) { c.AuditMaxAgeDays = -1 }, "audit_max_age_days"},
		{"negative digest interval", func(c *Config) { c.AuditDigestInterval = -time.Second }, "audit_digest_interval"},
		{"sub-second digest interval", func(c *Config) { c.AuditDigestInterval = time.Millisecond }, "audit_digest_interval"},
		{"rotating stdout", func(c *Config) { c.AuditMaxSizeMB = 10 }, "file path"},
		{"token with newline", func(c *Config) { c.AdminToken = "a\nb" }, "admin_token"},
		{"admin hosts", func(c *Config) {
			c.AdminHosts = []string{"robotsgate", "Crawler.Example.", "10.0.0.5", "::1", "[fe80::1]"}
		}, ""},
		{"admin host with port", func(c *Config) { c.AdminHosts = []string{"robotsgate:9310"} }, "admin_hosts[0]: \"robotsgate:9310\" has a port"},
		{"admin host ipv6 with port", func(c *Config) { c.AdminHosts = []string{"ok", "[::1]:9310"} }, "admin_hosts[1]"},
		{"admin host URL", func(c *Config) { c.AdminHosts = []string{"http://robotsgate"} }, "admin_hosts[0]"},
		{"admin host wildcard", func(c *Config) { c.AdminHosts = []string{"*.example"} }, "admin_hosts[0]"},
		{"admin host empty", func(c *Config) { c.AdminHosts = []string{""} }, "admin_hosts[0]: empty"},
		{"admin host shorthand", func(c *Config) { c.AdminHosts = []string{"127.1"} }, "admin_hosts[0]"},
	} {
		c := Default()
		tc.mutate(&c)
		err := c.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestPoliteConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*PolitenessConfig)
		want string // substring of the error; "" means valid
	}{
		{"default", func(*PolitenessConfig) {}, ""},
		{"ignore", func(p *PolitenessConfig) { p.CrawlDelay = "ignore" }, ""},
		{"default delay", func(p *PolitenessConfig) { p.DefaultCrawlDelay = time.Second }, ""},
		{"concurrency", func(p *PolitenessConfig) { p.MaxConcurrency = 4 }, ""},
		{"bad crawl_delay", func(p *PolitenessConfig) { p.CrawlDelay = "obey" }, "politeness.crawl_delay"},
		{"empty crawl_delay", func(p *PolitenessConfig) { p.CrawlDelay = "" }, "politeness.crawl_delay"},
		{"zero max delay", func(p *PolitenessConfig) { p.MaxCrawlDelay = 0 }, "politeness.max_crawl_delay"},
		{"negative wait", func(p *PolitenessConfig) { p.MaxQueueWait = -time.Second }, "politeness.max_queue_wait"},
		{"zero backoff", func(p *PolitenessConfig) { p.BackoffStart = 0 }, "politeness.backoff_start"},
		{"zero backoff max", func(p *PolitenessConfig) { p.BackoffMax = 0 }, "politeness.backoff_max"},
		{"start above max", func(p *PolitenessConfig) { p.BackoffStart = 2 * time.Hour }, "politeness.backoff_start"},
		{"negative default", func(p *PolitenessConfig) { p.DefaultCrawlDelay = -1 }, "politeness.default_crawl_delay"},
		{"default above max", func(p *PolitenessConfig) { p.DefaultCrawlDelay = 2 * time.Minute }, "politeness.default_crawl_delay"},
		{"negative concurrency", func(p *PolitenessConfig) { p.MaxConcurrency = -1 }, "politeness.max_concurrency"},
	}
	for _, tt := range tests {
		cfg := Default()
		tt.edit(&cfg.Politeness)
		err := cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.want)
		}
	}
}

func TestHTTPSConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"mode", func(c *Config) { c.HTTPS.Mode = "intercept" }, "https.mode"},
		{"no ports", func(c *Config) { c.HTTPS.AllowedPorts = nil }, "https.allowed_ports"},
		{"bad port", func(c *Config) { c.HTTPS.AllowedPorts = []int{70000} }, "https.allowed_ports"},
		{"half CA", func(c *Config) { c.HTTPS.CAKey = "k.pem" }, "https.ca_cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mod(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestValidateRobotTags(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*RobotTagsConfig)
		want string // substring of the error, "" = valid
	}{
		{func(*RobotTagsConfig) {}, ""},
		{func(c *RobotTagsConfig) { c.Mode = "off" }, ""},
		{func(c *RobotTagsConfig) { c.Mode = "enforce"; c.Deny = append(c.Deny, "noai", "noimageai") }, ""},
		{func(c *RobotTagsConfig) { c.MaxScanBytes = 0 }, ""},
		{func(c *RobotTagsConfig) { c.Mode = "block" }, "robot_tags.mode"},
		{func(c *RobotTagsConfig) { c.Mode = "" }, "robot_tags.mode"},
		{func(c *RobotTagsConfig) { c.MaxScanBytes = -1 }, "robot_tags.max_scan_bytes"},
		{func(c *RobotTagsConfig) { c.MaxScanBytes = 1 << 30 }, "robot_tags.max_scan_bytes"},
		{func(c *RobotTagsConfig) { c.Deny = []string{"noindex, nofollow"} }, "robot_tags.deny"},
		{func(c *RobotTagsConfig) { c.Deny = []string{""} }, "robot_tags.deny"},
	} {
		cfg := Default()
		tc.mut(&cfg.RobotTags)
		err := cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: Validate() = %v, want %q", cfg.RobotTags, err, tc.want)
		}
	}
}

// cidrs parses client networks as Load does.
func cidrs(t testing.TB, s ...string) []netip.Prefix {
	t.Helper()
	var p []netip.Prefix
	if err := parseList(&p, s, parseCIDR); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadCIDRs: a client network that is not a CIDR or an address is
// refused by Load, naming the key and the item, from every source.
func TestBadCIDRs(t *testing.T) {
	file := testsupport.WriteFile(t, "cidr.yaml", "auth:\n  allow_cidrs: [10.0.0.0/99]\n")
	if _, err := Load([]string{"-config", file}, testsupport.EnvMap(nil)); err == nil || !strings.Contains(err.Error(), "auth.allow_cidrs[0]") {
		t.Errorf("YAML 10.0.0.0/99: %v", err)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.0/99"} {
		_, err := Load([]string{"-allow-cidrs", "127.0.0.0/8," + bad}, testsupport.EnvMap(nil))
		if err == nil || !strings.Contains(err.Error(), "auth.allow_cidrs") || !strings.Contains(err.Error(), bad) {
			t.Errorf("-allow-cidrs %s: %v", bad, err)
		}
	}
	// Mapped IPv4 networks become IPv4 ones; addresses become /32 and /128.
	got := cidrs(t, "::ffff:192.0.2.0/120", "192.0.2.7", "2001:db8::1", "10.1.2.3/8")
	want := []string{"192.0.2.0/24", "192.0.2.7/32", "2001:db8::1/128", "10.0.0.0/8"}
	for i, p := range got {
		if p.String() != want[i] {
			t.Errorf("cidr %d = %s, want %s", i, p, want[i])
		}
	}
}
