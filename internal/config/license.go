package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
)

// LicenseConfig is how RSL licenses (robots.txt License lines) are
// applied to crawlers that declare purposes.
type LicenseConfig struct {
	Mode LicenseMode // off | report | enforce
	// Tokens are "SERVER=TOKEN" items: the license token robotsgate sends
	// as Authorization: License TOKEN to an origin whose license needs a
	// token of the License Server SERVER (an http or https URL).
	Tokens []string
}

// LicenseMode is a value of license.mode.
type LicenseMode string

// Values of license.mode.
const (
	LicenseOff     LicenseMode = "off"     // read no License line, fetch no license
	LicenseReport  LicenseMode = "report"  // audit and annotate (X-Robotsgate-License), refuse nothing
	LicenseEnforce LicenseMode = "enforce" // refuse license-prohibited and license-required
)

// Valid reports whether m is a value of license.mode.
func (m LicenseMode) Valid() bool {
	return m == LicenseOff || m == LicenseReport || m == LicenseEnforce
}

// licenseOptions are the options of the license: section.
func licenseOptions() []option {
	return []option{
		{"license.mode", "license", "RSL licenses (robots.txt License lines) for crawlers that declare purposes: off, report (audit and add X-Robotsgate-License) or enforce (refuse with license-prohibited or license-required)", func(c *Config) any { return (*string)(&c.License.Mode) }},
		{"license.tokens", "license-tokens", "comma-separated `SERVER=TOKEN` items: the token sent as Authorization: License TOKEN to origins whose license needs one from that License Server (prefer the environment variable)", func(c *Config) any { return &c.License.Tokens }},
	}
}

// validateLicense checks the license: section.
func (c *Config) validateLicense() error {
	if err := checkMode("license.mode", c.License.Mode, LicenseOff, LicenseReport, LicenseEnforce); err != nil {
		return err
	}
	_, err := LicenseTokens(c.License.Tokens)
	return err
}

// LicenseTokens returns the tokens of license.tokens items, keyed by the
// canonical origin of their License Server ([enforce.Origin]), so that
// every spelling of one server finds its token and no other server does.
// Errors never quote a token.
func LicenseTokens(items []string) (map[string]string, error) {
	m := make(map[string]string, len(items))
	for i, it := range items {
		server, token, ok := strings.Cut(it, "=")
		server, token = strings.TrimSpace(server), strings.TrimSpace(token)
		if !ok || server == "" || token == "" {
			return nil, fmt.Errorf("license.tokens[%d]: want SERVER=TOKEN (the License Server's URL, then its token)", i)
		}
		if strings.ContainsAny(token, " \t\r\n,") {
			return nil, fmt.Errorf("license.tokens[%d]: the token of %s holds white space or a comma", i, server)
		}
		u, err := url.Parse(server)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
			return nil, fmt.Errorf("license.tokens[%d]: the server %q is not an http or https URL", i, server)
		}
		o, err := enforce.Origin(u)
		if err != nil {
			return nil, fmt.Errorf("license.tokens[%d]: %w", i, err)
		}
		if _, dup := m[o]; dup {
			return nil, errors.New("license.tokens: two tokens for " + o)
		}
		m[o] = token
	}
	return m, nil
}
