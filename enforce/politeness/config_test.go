package politeness

import (
	"testing"
	"time"
)

// testMaxDelay is robotsgate's default politeness.max_crawl_delay.
const testMaxDelay = 60 * time.Second

// filled returns cfg with its zero limits set to robotsgate's defaults
// (internal/config), as the proxy passes them; a limit a test sets (also
// to a bad value) is kept.
func filled(cfg Config) Config {
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&cfg.MaxDelay, testMaxDelay)
	or(&cfg.MaxWait, 30*time.Second)
	or(&cfg.BackoffStart, 30*time.Second)
	or(&cfg.BackoffMax, time.Hour)
	return cfg
}

// TestConfigRequired: politeness holds no defaults; a limit left zero is
// an error, not a silent second default.
func TestConfigRequired(t *testing.T) {
	for name, unset := range map[string]func(*Config){
		"MaxDelay":     func(c *Config) { c.MaxDelay = 0 },
		"MaxWait":      func(c *Config) { c.MaxWait = 0 },
		"BackoffStart": func(c *Config) { c.BackoffStart = 0 },
		"BackoffMax":   func(c *Config) { c.BackoffMax = 0 },
	} {
		cfg := filled(Config{})
		unset(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("New accepted a Config without %s", name)
		}
	}
	if _, err := New(filled(Config{})); err != nil {
		t.Errorf("all limits set: %v", err)
	}
}
