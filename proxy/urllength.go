package proxy

import (
	"fmt"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// URL length: a URL longer than max_url_bytes is refused 414
// url-too-long before it is decided (the robots step), and its audit
// record keeps only the first KiB of it.

// auditURLBytes is how much of a URL too long to decide an audit record
// keeps, so that such requests cannot fill the audit log either.
const auditURLBytes = 1 << 10

// urlBytes returns the length of u as robotsgate decides it: scheme,
// userinfo, host, path, params and query, percent-encoded as the request
// URL is read (raw non-ASCII octets count three times, as they are
// matched). The path and query are what robots.txt rules are matched
// against; the host and userinfo are counted too, as the client chooses
// them as freely.
func urlBytes(u *url.URL) int {
	n := len(u.Scheme) + len("://") + len(u.Host)
	if u.User != nil {
		n += len(u.User.String()) + 1
	}
	if u.Opaque != "" {
		n += len(u.Opaque)
	} else {
		n += len(u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		n += 1 + len(u.RawQuery)
	}
	return n
}

// longURLDecision is the refusal of a URL of n bytes, more than max: the
// URL and origin it names are cut to [auditURLBytes].
func longURLDecision(u *url.URL, agent string, n, max int) enforce.Decision {
	return enforce.Decision{
		URL: cut(enforce.RedactedURL(u)), Origin: cut(u.Scheme + "://" + u.Host), Agent: agent,
		Reason: answer.ReasonURLTooLong,
		Detail: fmt.Sprintf("the URL has %d bytes, more than max_url_bytes (%d)", n, max),
	}
}

// cut returns s cut to [auditURLBytes].
func cut(s string) string {
	if len(s) > auditURLBytes {
		return s[:auditURLBytes] + "..."
	}
	return s
}
