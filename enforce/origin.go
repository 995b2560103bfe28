package enforce

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// errNoOrigin is wrapped by Origin's errors.
var errNoOrigin = errors.New("enforce: URL has no origin")

// Origin returns the origin of u as RFC 9309 §2.3 scopes robots.txt:
// scheme + "://" + [Authority]. It is THE key of every per-origin state
// (robots.txt cache, single fetch, pacing, pauses, concurrency, Redis
// keys, metrics): every spelling of one host and port gives the same
// origin. It fails for URLs without a scheme or host, and (wrapping
// [ErrInvalidHost]) for a host [CanonicalHost] refuses.
func Origin(u *url.URL) (string, error) {
	if u == nil {
		return "", fmt.Errorf("%w: nil URL", errNoOrigin)
	}
	scheme := u.Scheme
	if scheme == "" {
		return "", fmt.Errorf("%w: %q has no scheme", errNoOrigin, RedactedURL(u))
	}
	if hasUpper(scheme) {
		scheme = strings.ToLower(scheme)
	}
	auth, err := authority(u, scheme)
	if err != nil {
		return "", err
	}
	if strings.IndexByte(auth, '%') >= 0 {
		auth = strings.ReplaceAll(auth, "%", "%25") // an IPv6 zone, escaped as in a URL
	}
	return scheme + "://" + auth, nil
}

// Authority returns the canonical host[:port] of u, the one robotsgate
// forwards to, spelled as [url.URL.Host] holds it (an IPv6 zone unescaped): the host as [CanonicalHost] spells it, and the port in
// decimal without leading zeros, left out when it is the scheme's default
// (80 for http, 443 for https). A port must be decimal and at most 65535.
func Authority(u *url.URL) (string, error) {
	if u == nil {
		return "", fmt.Errorf("%w: nil URL", errNoOrigin)
	}
	return authority(u, strings.ToLower(u.Scheme))
}

func authority(u *url.URL, scheme string) (string, error) {
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("%w: %q has no host", errNoOrigin, RedactedURL(u))
	}
	if strings.IndexByte(host, ':') >= 0 && !strings.HasPrefix(u.Host, "[") {
		return "", fmt.Errorf("%w: %q has an invalid host:port %q", errNoOrigin, RedactedURL(u), u.Host)
	}
	host, err := CanonicalHost(host)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		return host, nil
	}
	if !allDigits(port) {
		return "", fmt.Errorf("%w: %q has an invalid port %q", errNoOrigin, RedactedURL(u), port)
	}
	if port[0] == '0' || len(port) > 5 {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 {
			return "", fmt.Errorf("%w: %q has an invalid port %q", errNoOrigin, RedactedURL(u), port)
		}
		port = strconv.Itoa(n)
	} else if len(port) == 5 && port > "65535" {
		return "", fmt.Errorf("%w: %q has an invalid port %q", errNoOrigin, RedactedURL(u), port)
	}
	if (port == "80" && scheme == "http") || (port == "443" && scheme == "https") {
		return host, nil
	}
	if h := u.Host; len(h) == len(host)+1+len(port) && h[:len(host)] == host && h[len(host)] == ':' && h[len(host)+1:] == port {
		return h, nil // already in canonical form: no new string
	}
	return host + ":" + port, nil
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// RedactedURL returns u as a string without its userinfo, for decisions,
// logs and errors: a password, and also a user name (tokens are often
// sent as one: https://TOKEN@host/), must not reach them. Unlike
// [url.URL.Redacted] it drops the user name too.
func RedactedURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = nil
	return c.String()
}

// RedactURLsIn returns s with the userinfo of every URL in it removed
// ("http://user:secret@host/" becomes "http://host/"), for error messages
// and other text that may quote a URL: net/http's errors quote the
// request URL, keeping the user name (often a token) and sometimes the
// password. A "://" followed by an authority holding "@" before the first
// "/", "?", "#", quote or white space is taken as a URL with userinfo.
func RedactURLsIn(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		start := i + len("://")
		end := start + strings.IndexFunc(s[start:], func(r rune) bool {
			return strings.ContainsRune("/?#\"'`<> \t\r\n", r)
		})
		if end < start { // the text ends inside the authority
			end = len(s)
		}
		b.WriteString(s[:start])
		if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
			start += at + 1
		}
		s = s[start:]
	}
	b.WriteString(s)
	return b.String()
}
