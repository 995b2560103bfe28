package proxy

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
)

// ReasonURLTooLong is the reason of a request refused with 414 because its
// URL is longer than Config.MaxURLBytes.
const ReasonURLTooLong enforce.Reason = "url-too-long"

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

// refuseLongURL answers r with 414 URI Too Long, and audits it, when its
// URL is longer than Config.MaxURLBytes: the request is not decided, and
// so costs no matching. It returns nil for a URL within the limit.
func (s *Server) refuseLongURL(r *http.Request, agent string) *http.Response {
	n := urlBytes(r.URL)
	if n <= s.cfg.MaxURLBytes {
		return nil
	}
	u := enforce.RedactedURL(r.URL)
	if len(u) > auditURLBytes {
		u = u[:auditURLBytes] + "..."
	}
	origin := r.URL.Scheme + "://" + r.URL.Host
	if len(origin) > auditURLBytes {
		origin = origin[:auditURLBytes] + "..."
	}
	d := enforce.Decision{
		URL: u, Origin: origin, Agent: agent, Reason: ReasonURLTooLong,
		Detail: fmt.Sprintf("the URL has %d bytes, more than max_url_bytes (%d)", n, s.cfg.MaxURLBytes),
	}
	resp := Refuse(r, http.StatusRequestURITooLong, d)
	e := EventFromDecision(r.RemoteAddr, r.Method, d)
	e.Decision, e.Status = DecisionBlocked, resp.StatusCode
	s.record(e)
	return resp
}
