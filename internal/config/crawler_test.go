package config

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestValidateCrawler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"defaults", func(*Config) {}, ""},
		{"email", func(c *Config) { c.Crawler.Contact = "ops@crawler.example" }, ""},
		{"mailto", func(c *Config) { c.Crawler.Contact = "mailto:ops@crawler.example?subject=bot" }, ""},
		{"https contact", func(c *Config) { c.Crawler.Contact = "https://crawler.example/contact" }, ""},
		{"named address", func(c *Config) { c.Crawler.Contact = "Ops <ops@crawler.example>" }, "crawler.contact:"},
		{"javascript", func(c *Config) { c.Crawler.Contact = "javascript:alert(1)" }, "crawler.contact:"},
		{"not an address", func(c *Config) { c.Crawler.Contact = "call us" }, "crawler.contact:"},
		{"control character", func(c *Config) { c.Crawler.Contact = "ops@crawler.example\n" }, "control character"},
		{"url", func(c *Config) { c.Crawler.URL = "https://crawler.example/bot" }, ""},
		{"http url", func(c *Config) { c.Crawler.URL = "http://crawler.example/bot" }, "crawler.url:"},
		{"name with a line break", func(c *Config) { c.Crawler.Name = "a\nb" }, "crawler.name:"},
		{"volume off", func(c *Config) { c.Volume.Interval = 0 }, ""},
		{"volume too often", func(c *Config) { c.Volume.Interval = time.Second }, "audit_volume_interval: 1s is neither 0"},
		{"volume origins", func(c *Config) { c.Volume.MaxOrigins = 0 }, "audit_volume_max_origins:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mutate(&c)
			err := c.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadCrawler(t *testing.T) {
	cfg, err := Load([]string{"-crawler-contact", "ops@crawler.example", "-audit-volume-interval", "1m"},
		testsupport.EnvMap(map[string]string{"ROBOTSGATE_CRAWLER_URL": "https://crawler.example/bot"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Crawler.Contact != "ops@crawler.example" || cfg.Crawler.URL != "https://crawler.example/bot" || cfg.Volume.Interval != time.Minute {
		t.Errorf("crawler %+v, volume %+v", cfg.Crawler, cfg.Volume)
	}
	_, err = Load([]string{"-config", testsupport.WriteFile(t, "c.yaml", "crawler:\n  contac: x\n")}, testsupport.EnvMap(nil))
	if err == nil || !strings.Contains(err.Error(), `did you mean "contact"?`) {
		t.Errorf("misspelt key: %v", err)
	}
}
