package enforce

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// OriginsOf reads how an operator names an origin, the same everywhere
// (the admin API's origin parameter, "robotsgate audit -origin"): an
// origin ("https://example.com:8443"), any URL of it (its path, query and
// fragment ignored), or a host with an optional port ("example.com",
// "[::1]:8080"), which names its origin under http and under https. It
// returns the canonical origins ([Origin]): one, or two for a host (http
// first).
func OriginsOf(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	schemes := []string{""}
	if !strings.Contains(s, "://") {
		schemes = []string{"http://", "https://"}
	}
	var out []string
	for _, scheme := range schemes {
		u, err := url.Parse(scheme + s)
		if err == nil && u.Scheme != "http" && u.Scheme != "https" {
			err = errors.New("want http or https")
		}
		if err == nil && u.Host == "" {
			err = errors.New("no host")
		}
		if err == nil && u.User != nil {
			err = errors.New("user information is not part of an origin")
		}
		var o string
		if err == nil {
			o, err = Origin(u)
		}
		if err != nil {
			return nil, fmt.Errorf("origin %q: %w (want https://host[:port], any URL of it, or host[:port] for both http and https)", s, err)
		}
		out = append(out, o)
	}
	return out, nil
}
