package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Bounds of settings.
const (
	maxCacheMB   = 1 << 30
	maxScanBytes = 8 << 20 // robot_tags.max_scan_bytes: the scan buffer is per response
)

// Validate reports the first problem of c as one line that starts with
// the YAML key and ends with the flag and environment variable setting
// it, e.g. `robots.ttl: -1h0m0s is not positive (flag -robots-ttl, env
// ROBOTSGATE_ROBOTS_TTL)`.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateProxy, c.validateRobots, c.validateUpstream, c.validateAccess, c.validateAdmin, c.validateExposure,
		c.validateHTTPS, c.validatePoliteness, c.validateRobotTags, c.validateUsage, c.validateSites, c.validateTDMRep, c.validateLicense,
		c.validateSigning, c.validateEgress, c.validatePayment, c.validateCrawler,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// keyError is a problem with the setting key, worded by msg.
type keyError struct {
	key string
	msg string
	err error // wrapped cause, if any
}

func (e *keyError) Error() string {
	return e.key + ": " + e.msg + flagOf(e.key)
}

func (e *keyError) Unwrap() error { return e.err }

// errorf returns a [keyError] for key.
func errorf(key, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &keyError{key: key, msg: err.Error(), err: errors.Unwrap(err)}
}

// validateProxy checks the top-level keys of the proxy itself.
func (c *Config) validateProxy() error {
	if err := checkHostPort("listen", c.Listen); err != nil {
		return err
	}
	if c.Transparent.Listen != "" {
		if err := checkHostPort("transparent.listen", c.Transparent.Listen); err != nil {
			return err
		}
	}
	if c.Agent != "" && (!robots.ValidAgent(c.Agent) || len(c.Agent) > robots.MaxAgentBytes) {
		return errorf("agent", "%q is not a product token of at most %d bytes (letters, digits, '_' and '-' only, e.g. MyBot or MJ12bot)",
			c.Agent, robots.MaxAgentBytes)
	}
	if c.AgentHeader != "" && c.AgentHeader != "-" && !isHeaderName(c.AgentHeader) {
		return errorf("agent_header", "%q is not a header name (or \"-\" to disable)", c.AgentHeader)
	}
	if err := checkMode("mode", c.Mode, ModeEnforce, ModeReport); err != nil {
		return err
	}
	if err := checkMode("audit", c.Audit, AuditBlocked, AuditAll); err != nil {
		return err
	}
	for _, e := range []struct {
		key, v  string
		allowed []string
	}{
		{"log_level", c.LogLevel, []string{"debug", "info", "warn", "error"}},
		{"log_format", c.LogFormat, []string{"auto", "json", "console"}},
	} {
		if err := oneOf(e.key, e.v, e.allowed...); err != nil {
			return err
		}
	}
	if c.AuditLog == "" {
		return errorf("audit_log", "empty (a file path, or \"-\" for stdout)")
	}
	if u := c.UpstreamProxy; u != nil && ((u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return errorf("upstream_proxy", "%q is not an http:// or https:// URL with a host", u.Redacted())
	}
	if c.MaxURLBytes < 1<<10 || c.MaxURLBytes > 1<<20 {
		return errorf("max_url_bytes", "%d is not between 1024 and 1048576", c.MaxURLBytes)
	}
	if c.Client.MaxHeaderBytes < 4<<10 || c.Client.MaxHeaderBytes > 16<<20 {
		return errorf("client.max_header_bytes", "%d is not between 4096 and 16777216", c.Client.MaxHeaderBytes)
	}
	if c.Client.HeaderTimeout <= 0 {
		return errorf("client.header_timeout", "%v is not positive", c.Client.HeaderTimeout)
	}
	if c.Client.IdleTimeout <= 0 {
		return errorf("client.idle_timeout", "%v is not positive", c.Client.IdleTimeout)
	}
	if c.ShutdownTimeout <= 0 {
		return errorf("shutdown_timeout", "%v is not positive", c.ShutdownTimeout)
	}
	return checkCache(c.Cache)
}

// checkCache checks that the cache setting is "memory" or a Redis URL
// of a scheme robotsgate knows (its own checks are redisfleet's).
func checkCache(cache string) error {
	if cache != "memory" && !strings.HasPrefix(cache, "redis://") && !strings.HasPrefix(cache, "rediss://") &&
		!strings.HasPrefix(cache, "redis-sentinel://") && !strings.HasPrefix(cache, "rediss-sentinel://") &&
		!strings.HasPrefix(cache, "redis-cluster://") && !strings.HasPrefix(cache, "rediss-cluster://") {
		return errorf("cache", `neither "memory" nor a redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster:// URL`)
	}
	return nil
}

// checkHostPort checks that the setting key is host:port with a numeric
// port.
func checkHostPort(key, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errorf(key, "%q is not host:port: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return errorf(key, "%q: port %q is not a number 0-65535", addr, port)
	}
	return nil
}

// validateRobots checks the robots: section.
func (c *Config) validateRobots() error {
	r := &c.Robots
	if strings.TrimSpace(r.UserAgent) == "" || strings.ContainsAny(r.UserAgent, "\r\n") {
		return errorf("robots.user_agent", "%q must be a non-empty single line", r.UserAgent)
	}
	if err := positive(
		duration{"robots.fetch_timeout", r.FetchTimeout}, duration{"robots.ttl", r.TTL}, duration{"robots.min_ttl", r.MinTTL},
		duration{"robots.unreachable_window", r.UnreachableWindow}, duration{"robots.retry_min", r.RetryMin}, duration{"robots.retry_max", r.RetryMax},
	); err != nil {
		return err
	}
	switch {
	case r.MinTTL > r.TTL:
		return errorf("robots.min_ttl", "%v exceeds robots.ttl (%v)", r.MinTTL, r.TTL)
	case r.RetryMin > r.RetryMax:
		return errorf("robots.retry_min", "%v exceeds robots.retry_max (%v)", r.RetryMin, r.RetryMax)
	case r.MaxBytes < minRobotsBytes:
		return errorf("robots.max_bytes", "%d is below RFC 9309's minimum of %d (500 KiB)", r.MaxBytes, minRobotsBytes)
	case r.MaxRedirects < 0:
		return errorf("robots.max_redirects", "%d is negative (0 follows none)", r.MaxRedirects)
	case r.MaxEntries <= 0:
		return errorf("robots.max_entries", "%d is not positive (the cache is always bounded)", r.MaxEntries)
	case r.MaxCacheMB <= 0 || r.MaxCacheMB > maxCacheMB:
		return errorf("robots.max_cache_mb", "%d is not between 1 and %d (the cache is always bounded)", r.MaxCacheMB, maxCacheMB)
	case r.DocumentsMB < 0:
		return errorf("robots.documents_mb", "%d is negative (0 keeps no documents)", r.DocumentsMB)
	}
	return nil
}

// duration is a duration setting and its value.
type duration struct {
	key string
	v   time.Duration
}

// positive checks, in order, that every duration of ds is positive.
func positive(ds ...duration) error {
	for _, d := range ds {
		if d.v <= 0 {
			return errorf(d.key, "%v is not positive", d.v)
		}
	}
	return nil
}

// validateHTTPS checks the https: section.
func (c *Config) validateHTTPS() error {
	h := &c.HTTPS
	if !h.Mode.Valid() {
		return errorf("https.mode", "%q is not mitm or tunnel", h.Mode)
	}
	if len(h.AllowedPorts) == 0 {
		return errorf("https.allowed_ports", "empty; CONNECT would be refused to every port (the default is [80, 443])")
	}
	for _, p := range h.AllowedPorts {
		if p < 1 || p > 65535 {
			return errorf("https.allowed_ports", "%d is not a TCP port", p)
		}
	}
	if (h.CACert == "") != (h.CAKey == "") {
		return errorf("https.ca_cert", "https.ca_cert and https.ca_key must be set together")
	}
	if slices.Contains(h.UpstreamRoots, "") {
		return errorf("https.upstream_roots", "empty file name")
	}
	return nil
}

// validatePoliteness checks the politeness: section.
func (c *Config) validatePoliteness() error {
	p := &c.Politeness
	if err := checkMode("politeness.crawl_delay", p.CrawlDelay, CrawlDelayHonor, CrawlDelayIgnore); err != nil {
		return err
	}
	if err := positive(
		duration{"politeness.max_crawl_delay", p.MaxCrawlDelay}, duration{"politeness.max_queue_wait", p.MaxQueueWait},
		duration{"politeness.backoff_start", p.BackoffStart}, duration{"politeness.backoff_max", p.BackoffMax},
	); err != nil {
		return err
	}
	switch {
	case p.DefaultCrawlDelay < 0:
		return errorf("politeness.default_crawl_delay", "%v is negative (0 means none)", p.DefaultCrawlDelay)
	case p.DefaultCrawlDelay > p.MaxCrawlDelay:
		return errorf("politeness.default_crawl_delay", "%v is above max_crawl_delay (%v)", p.DefaultCrawlDelay, p.MaxCrawlDelay)
	case p.BackoffStart > p.BackoffMax:
		return errorf("politeness.backoff_start", "%v is above backoff_max (%v)", p.BackoffStart, p.BackoffMax)
	case p.MaxConcurrency < 0:
		return errorf("politeness.max_concurrency", "%d is negative (0 means no limit)", p.MaxConcurrency)
	}
	return nil
}

// validateRobotTags checks the robot_tags: section.
func (c *Config) validateRobotTags() error {
	t := &c.RobotTags
	if err := checkMode("robot_tags.mode", t.Mode, RobotTagsOff, RobotTagsAnnotate, RobotTagsEnforce); err != nil {
		return err
	}
	if t.MaxScanBytes < 0 || t.MaxScanBytes > maxScanBytes {
		return errorf("robot_tags.max_scan_bytes", "%d is not in 0..%d (0 = X-Robots-Tag headers only)", t.MaxScanBytes, maxScanBytes)
	}
	for _, d := range t.Deny {
		if d = strings.TrimSpace(d); d == "" || strings.ContainsAny(d, ":, \t\r\n") {
			return errorf("robot_tags.deny", "%q is not a directive name (e.g. noindex, none, noai)", d)
		}
	}
	return nil
}

// validateUsage checks the usage: section.
func (c *Config) validateUsage() error {
	u := &c.Usage
	if err := checkMode("usage.unknown", u.Unknown, UsageUnknownAllow, UsageUnknownDeny); err != nil {
		return err
	}
	if err := checkMode("usage.response", u.Response, UsageResponseAnnotate, UsageResponseEnforce); err != nil {
		return err
	}
	if u.PurposeHeader != "" && u.PurposeHeader != "-" && !isHeaderName(u.PurposeHeader) {
		return errorf("usage.purpose_header", "%q is not a header name (or \"-\" to disable)", u.PurposeHeader)
	}
	if c.Purposes&^aipref.SetOf(aipref.TrainAI, aipref.Search, aipref.AIInput, aipref.AIUse) != 0 {
		return errorf("purposes", "%q holds an unknown purpose (allowed values are %s)", c.Purposes, aipref.PurposeList)
	}
	if c.ContentUse > aipref.UseFull {
		return errorf("content_use", "%q is not a content use (allowed values are %s)", c.ContentUse, aipref.UseList)
	}
	return nil
}

// checkMode checks that key's value v is Valid; values are its values,
// which the error lists.
func checkMode[T interface {
	~string
	Valid() bool
}](key string, v T, values ...T) error {
	if v.Valid() {
		return nil
	}
	s := make([]string, len(values))
	for i, x := range values {
		s[i] = string(x)
	}
	return oneOf(key, string(v), s...)
}

// oneOf checks that key's value v is one of allowed.
func oneOf(key, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return errorf(key, "%q is not one of %s", v, strings.Join(allowed, ", "))
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

// IsLoopbackAddr reports whether the listen address addr ("host:port")
// accepts connections only from this machine: its host is "localhost" or
// a loopback IP. An empty host (":9309") means every interface.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
