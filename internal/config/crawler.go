package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
)

// CrawlerConfig is what robotsgate publish writes about the crawler for
// the sites it visits: its name, its operator's contact and where the
// published files are served.
type CrawlerConfig struct {
	Name    string // client_name of the page and cards; "" = the agent
	Contact string // e-mail address, mailto: or http(s) URL of the operator
	URL     string // https base URL the published files are served under
}

// VolumeConfig is the crawl report's volume records.
type VolumeConfig struct {
	Interval   time.Duration // how often they are written; 0 = none
	MaxOrigins int           // origins (with identity) counted separately per interval
}

// The volume records of the crawl report (audit_volume_interval,
// audit_volume_max_origins).
const (
	defaultVolumeInterval   = 5 * time.Minute
	defaultVolumeMaxOrigins = 10000
	minVolumeInterval       = 10 * time.Second
)

// crawlerOptions are the options of the crawler: section.
func crawlerOptions() []option {
	return []option{
		{"crawler.name", "crawler-name", "the crawler's `name` on the pages robotsgate publish writes (client_name of its Signature Agent Cards); empty = the agent", func(c *Config) any { return &c.Crawler.Name }, atReload},
		{"crawler.contact", "crawler-contact", "how site owners reach the crawler's operator (`contact`): an e-mail address, a mailto: URL or an http(s) URL; written by robotsgate publish on the crawler page and in the Signature Agent Cards", func(c *Config) any { return &c.Crawler.Contact }, atReload},
		{"crawler.url", "crawler-url", "https base `URL` the files of robotsgate publish are served under, e.g. https://crawler.example/bot (the page, and the cards' links)", func(c *Config) any { return &c.Crawler.URL }, atReload},
	}
}

// validateCrawler checks the crawler: section and the volume settings.
func (c *Config) validateCrawler() error {
	switch {
	case c.Volume.Interval < 0 || (c.Volume.Interval > 0 && c.Volume.Interval < minVolumeInterval):
		return errorf("audit_volume_interval", "%v is neither 0 (off) nor at least %v", c.Volume.Interval, minVolumeInterval)
	case c.Volume.MaxOrigins < 1:
		return errorf("audit_volume_max_origins", "%d is not positive", c.Volume.MaxOrigins)
	case strings.ContainsAny(c.Crawler.Name, "\r\n"):
		return errorf("crawler.name", "must not contain line breaks")
	}
	if c.Crawler.Contact != "" {
		if err := checkContact(c.Crawler.Contact); err != nil {
			return errorf("crawler.contact", "%w", err)
		}
	}
	if c.Crawler.URL != "" {
		if err := CheckSignatureAgent(c.Crawler.URL); err != nil {
			return errorf("crawler.url", "%w", err)
		}
	}
	return nil
}

// checkContact reports whether s is a contact robotsgate publish can
// write: an e-mail address, a mailto: URL or an absolute http(s) URL.
func checkContact(s string) error {
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("%q holds a control character", s)
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		switch {
		case u.Scheme == "mailto" && u.Opaque != "":
			if _, err := mail.ParseAddress(strings.SplitN(u.Opaque, "?", 2)[0]); err == nil {
				return nil
			}
		case (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil:
			return nil
		}
		return fmt.Errorf("%q is not a mailto: URL with an address, nor an absolute http(s) URL", s)
	}
	if a, err := mail.ParseAddress(s); err != nil || a.Name != "" {
		return fmt.Errorf("%q is not an e-mail address, a mailto: URL or an http(s) URL", s)
	}
	return nil
}
