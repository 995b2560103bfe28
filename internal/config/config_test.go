package config

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestValidateDefaults(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default() is invalid: %v", err)
	}
}

func TestValidateProxyAndRobots(t *testing.T) {
	cases := []struct {
		key    string
		mutate func(*Config)
	}{
		{"listen", func(c *Config) { c.Listen = "localhost" }},
		{"listen", func(c *Config) { c.Listen = "127.0.0.1:99999" }},
		{"agent", func(c *Config) { c.Agent = "Bot/1.0" }},
		{"agent", func(c *Config) { c.Agent = "My Bot" }},
		{"agent", func(c *Config) { c.Agent = "*" }},
		{"agent_header", func(c *Config) { c.AgentHeader = "X Bad" }},
		{"mode", func(c *Config) { c.Mode = "" }},
		{"audit", func(c *Config) { c.Audit = "none" }},
		{"audit_log", func(c *Config) { c.AuditLog = "" }},
		{"log_level", func(c *Config) { c.LogLevel = "trace" }},
		{"log_format", func(c *Config) { c.LogFormat = "xml" }},
		{"upstream_proxy", func(c *Config) { c.UpstreamProxy = &url.URL{Scheme: "socks5", Host: "x:1"} }},
		{"shutdown_timeout", func(c *Config) { c.ShutdownTimeout = 0 }},
		{"cache", func(c *Config) { c.Cache = "" }},
		{"robots.user_agent", func(c *Config) { c.Robots.UserAgent = " " }},
		{"robots.user_agent", func(c *Config) { c.Robots.UserAgent = "a\r\nX-Injected: 1" }},
		{"robots.fetch_timeout", func(c *Config) { c.Robots.FetchTimeout = -time.Second }},
		{"robots.ttl", func(c *Config) { c.Robots.TTL = 0 }},
		{"robots.min_ttl", func(c *Config) { c.Robots.MinTTL = 48 * time.Hour }},
		{"robots.retry_min", func(c *Config) { c.Robots.RetryMin = 2 * time.Hour }},
		{"robots.unreachable_window", func(c *Config) { c.Robots.UnreachableWindow = 0 }},
		{"robots.max_bytes", func(c *Config) { c.Robots.MaxBytes = 1000 }},
		{"robots.max_redirects", func(c *Config) { c.Robots.MaxRedirects = -1 }},
		{"robots.max_entries", func(c *Config) { c.Robots.MaxEntries = 0 }},
		{"robots.max_entries", func(c *Config) { c.Robots.MaxEntries = -1 }},
		{"robots.max_cache_mb", func(c *Config) { c.Robots.MaxCacheMB = 0 }},
	}
	for _, tc := range cases {
		c := Default()
		tc.mutate(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: invalid value accepted", tc.key)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.key+":") {
			t.Errorf("%s: error %q does not start with the key", tc.key, err)
		}
	}
	ok := []func(*Config){
		func(c *Config) { c.Agent = "My-Bot_x" },
		func(c *Config) { c.Agent = "MJ12bot" }, // digits, as robots.txt parsing accepts them
		func(c *Config) { c.Agent, c.AllowAgentOverride = "360Spider", true },
		func(c *Config) { c.AgentHeader = "-" },
		func(c *Config) { c.Mode, c.Audit, c.LogLevel, c.LogFormat = "report", "all", "debug", "json" },
		func(c *Config) { c.UpstreamProxy = &url.URL{Scheme: "http", Host: "127.0.0.1:3128"} },
		func(c *Config) { c.Cache = "redis://127.0.0.1:6379/0" },
		func(c *Config) { c.Listen = "[::1]:0" },
	}
	for i, m := range ok {
		c := Default()
		m(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("valid config %d rejected: %v", i, err)
		}
	}
}

func TestMaxURLBytesValidate(t *testing.T) {
	for _, n := range []int{0, 1023, 1<<20 + 1} {
		cfg := Default()
		cfg.MaxURLBytes = n
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "max_url_bytes") {
			t.Errorf("max_url_bytes %d: %v", n, err)
		}
	}
	if Default().MaxURLBytes != 16384 {
		t.Errorf("default max_url_bytes %d", Default().MaxURLBytes)
	}
}
