package proxy

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/proxy/access"
)

// Validation of the configuration sections the proxy reads; Config.Validate
// calls these.

// validateAccess checks the access control, admin and audit rotation
// keys. It is called by Validate.
func (c *Config) validateAccess() error {
	for i, cr := range c.Auth.Credentials {
		if err := access.CheckCredential(cr); err != nil {
			return fmt.Errorf("auth.credentials[%d]: %w", i, err)
		}
	}
	for i, s := range c.Auth.AllowCIDRs {
		if _, err := access.ParseCIDR(s); err != nil {
			return fmt.Errorf("auth.allow_cidrs[%d]: %w", i, err)
		}
	}
	if c.Listen != "" && !access.IsLoopbackAddr(c.Listen) && !c.Auth.AllowOpen {
		// Beyond loopback both controls are required; each is turned off
		// only explicitly: the client networks by listing every address
		// (allow_cidrs: [0.0.0.0/0, "::/0"]), both by allow_open: true.
		var missing []string
		if len(c.Auth.Credentials) == 0 && c.Auth.CredentialsFile == "" {
			missing = append(missing, "credentials (auth.credentials or auth.credentials_file)")
		}
		if len(c.Auth.AllowCIDRs) == 0 {
			missing = append(missing, "client networks (auth.allow_cidrs; [0.0.0.0/0, \"::/0\"] for any)")
		}
		if len(missing) > 0 {
			return fmt.Errorf("listen: %q is not a loopback address, which requires both proxy credentials and client networks; missing: %s; "+
				"or set auth.allow_open: true to waive both on purpose (configured ones still apply)", c.Listen, strings.Join(missing, " and "))
		}
	}
	if c.AdminListen != "" {
		if _, _, err := net.SplitHostPort(c.AdminListen); err != nil {
			return fmt.Errorf("admin_listen: %q: %w", c.AdminListen, err)
		}
	}
	admin, key := c.AdminListen, "admin_listen"
	if admin == "" {
		admin, key = c.Listen, "listen"
	}
	if admin != "" && !access.IsLoopbackAddr(admin) && c.AdminToken == "" {
		return fmt.Errorf("admin_token: the admin API is reachable beyond loopback (%s %q): set admin_token (ROBOTSGATE_ADMIN_TOKEN)", key, admin)
	}
	if strings.ContainsAny(c.AdminToken, " \t\r\n") {
		return errors.New("admin_token: must not contain spaces or line breaks")
	}
	switch {
	case c.AuditMaxSizeMB < 0:
		return fmt.Errorf("audit_max_size_mb: %d is negative", c.AuditMaxSizeMB)
	case c.AuditMaxBackups < 0:
		return fmt.Errorf("audit_max_backups: %d is negative", c.AuditMaxBackups)
	case c.AuditMaxAgeDays < 0:
		return fmt.Errorf("audit_max_age_days: %d is negative", c.AuditMaxAgeDays)
	case c.AuditMaxSizeMB > 0 && (c.AuditLog == "" || c.AuditLog == "-"):
		return errors.New("audit_max_size_mb: rotation needs audit_log to be a file path")
	}
	return nil
}

// validateHTTPS checks the https section of c.
func (c *Config) validateHTTPS() error {
	h := &c.HTTPS
	switch h.Mode {
	case HTTPSModeMITM, HTTPSModeTunnel:
	default:
		return fmt.Errorf("https.mode: %q is not mitm or tunnel", h.Mode)
	}
	if len(h.AllowedPorts) == 0 {
		return errors.New("https.allowed_ports: empty; CONNECT would be refused to every port (the default is [443])")
	}
	for _, p := range h.AllowedPorts {
		if p < 1 || p > 65535 {
			return fmt.Errorf("https.allowed_ports: %d is not a TCP port", p)
		}
	}
	if (h.CACert == "") != (h.CAKey == "") {
		return errors.New("https.ca_cert and https.ca_key must be set together")
	}
	for _, f := range h.UpstreamRoots {
		if f == "" {
			return errors.New("https.upstream_roots: empty file name")
		}
	}
	return nil
}

// validatePoliteness checks the politeness: section.
func (c *Config) validatePoliteness() error {
	p := &c.Politeness
	if err := oneOf("politeness.crawl_delay", p.CrawlDelay, CrawlDelayHonor, CrawlDelayIgnore); err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		d   time.Duration
	}{
		{"max_crawl_delay", p.MaxCrawlDelay},
		{"max_queue_wait", p.MaxQueueWait},
		{"backoff_start", p.BackoffStart},
		{"backoff_max", p.BackoffMax},
	} {
		if f.d <= 0 {
			return fmt.Errorf("politeness.%s: %v is not positive", f.key, f.d)
		}
	}
	if p.DefaultCrawlDelay < 0 {
		return fmt.Errorf("politeness.default_crawl_delay: %v is negative (0 means none)", p.DefaultCrawlDelay)
	}
	if p.DefaultCrawlDelay > p.MaxCrawlDelay {
		return fmt.Errorf("politeness.default_crawl_delay: %v is above max_crawl_delay (%v)", p.DefaultCrawlDelay, p.MaxCrawlDelay)
	}
	if p.BackoffStart > p.BackoffMax {
		return fmt.Errorf("politeness.backoff_start: %v is above backoff_max (%v)", p.BackoffStart, p.BackoffMax)
	}
	if p.MaxConcurrency < 0 {
		return fmt.Errorf("politeness.max_concurrency: %d is negative (0 means no limit)", p.MaxConcurrency)
	}
	return nil
}

// validateRobotTags checks the robot_tags: section.
func (c *Config) validateRobotTags() error {
	t := &c.RobotTags
	if err := oneOf("robot_tags.mode", t.Mode, RobotTagsOff, RobotTagsAnnotate, RobotTagsEnforce); err != nil {
		return err
	}
	if t.MaxScanBytes < 0 || t.MaxScanBytes > maxScanBytesLimit {
		return fmt.Errorf("robot_tags.max_scan_bytes: %d is not in 0..%d (0 = X-Robots-Tag headers only)", t.MaxScanBytes, maxScanBytesLimit)
	}
	for _, d := range t.Deny {
		if d = strings.TrimSpace(d); d == "" || strings.ContainsAny(d, ":, \t\r\n") {
			return fmt.Errorf("robot_tags.deny: %q is not a directive name (e.g. noindex, none, noai)", d)
		}
	}
	return nil
}
