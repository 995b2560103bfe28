package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// Response headers robotsgate sets on answers it generates (and, in report
// mode, on forwarded responses that would have been blocked).
const (
	HeaderDecision = "X-Robotsgate-Decision" // the enforce.Reason, e.g. "disallowed"
	HeaderRule     = "X-Robotsgate-Rule"     // the deciding rule and its line, e.g. "Disallow: /private; line 3"
	HeaderAgent    = "X-Robotsgate-Agent"    // the agent decided for; "*" when none was known
)

// refusal is the JSON body of a refusal.
type refusal struct {
	Error       string      `json:"error"`
	Status      int         `json:"status"`
	Decision    string      `json:"decision"`
	Explanation string      `json:"explanation"`
	Detail      string      `json:"detail,omitempty"`
	URL         string      `json:"url"`
	Origin      string      `json:"origin"`
	Agent       string      `json:"agent"`
	Group       string      `json:"group,omitempty"`
	Rule        string      `json:"rule,omitempty"`
	Line        int         `json:"line,omitempty"`
	Robots      *RobotsJSON `json:"robots,omitempty"`
	RetryAfterS int         `json:"retry_after_s,omitempty"`
}

// explain says in one sentence why d refused the request.
func explain(d enforce.Decision) string {
	switch d.Reason {
	case enforce.ReasonDisallowed:
		return "the robots.txt group for this agent disallows this URL"
	case enforce.ReasonUnreachable:
		return "the origin's robots.txt could not be fetched (server error, 429, timeout or network error), so every URL of the origin is disallowed until it can be"
	case ReasonPaused:
		return "the origin asked crawlers to back off (503/429); robotsgate holds requests to it until the pause ends"
	case ReasonQueueFull:
		return "waiting for the origin's crawl-delay would take longer than allowed"
	case ReasonRobotTag:
		return "the response carried a robot tag saying it must not be kept"
	case ReasonPortForbidden:
		return "CONNECT to this port is not allowed"
	case ReasonSiteClosed:
		return "robots.txt disallows the whole site for this agent"
	case enforce.ReasonInvalidURL:
		return "the URL has no origin (scheme and host) to fetch robots.txt from"
	case ReasonSelfRequest:
		return "the destination is robotsgate itself (its proxy or admin address), which is not reachable through the proxy"
	case ReasonMisdirected:
		return "inside an HTTPS session a request must name the host and port of its CONNECT"
	default:
		return string(d.Reason)
	}
}

// agentName is how a refusal names the agent.
func agentName(agent string) string {
	if agent == "" {
		return "*"
	}
	return agent
}

// ruleHeader formats the deciding rule for the X-Robotsgate-Rule header,
// e.g. "Disallow: /private; line 3"; "" when no rule decided.
func ruleHeader(d enforce.Decision) string {
	if d.Rule == "" {
		return ""
	}
	r := d.Rule
	if d.Line > 0 {
		r += "; line " + strconv.Itoa(d.Line)
	}
	// Header values must not carry control characters; rules come from a
	// remote file.
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return -1
		}
		return c
	}, r)
}

// wantsJSON reports whether the client's Accept header asks for
// application/json (or a +json type).
func wantsJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
				return true
			}
		}
	}
	return false
}

// Refuse returns the response robotsgate sends instead of forwarding r:
// status (403 for robots.txt refusals, 429 for politeness ones) with a
// body explaining d, as JSON when the client accepts it and as short text
// otherwise. Retry-After is set when d.RetryAfter is. Other hooks use it
// for their own refusals.
func Refuse(r *http.Request, status int, d enforce.Decision) *http.Response {
	body := refusal{
		Error:       "robotsgate: " + strings.ToLower(http.StatusText(status)) + " by robots policy",
		Status:      status,
		Decision:    string(d.Reason),
		Explanation: explain(d),
		Detail:      d.Detail,
		URL:         d.URL,
		Origin:      d.Origin,
		Agent:       agentName(d.Agent),
		Group:       d.Group,
		Rule:        d.Rule,
		Line:        d.Line,
	}
	if body.URL == "" && r.URL != nil {
		body.URL = enforce.RedactedURL(r.URL)
	}
	body.Robots = newRobotsJSON(d)
	retry := 0
	if d.RetryAfter > 0 {
		retry = int((d.RetryAfter + time.Second - 1) / time.Second)
		body.RetryAfterS = retry
	}

	var text, ctype string
	if wantsJSON(r) {
		b, _ := json.MarshalIndent(body, "", "  ") // plain struct: cannot fail
		text, ctype = string(b)+"\n", "application/json"
	} else {
		text, ctype = refusalText(body), "text/plain; charset=utf-8"
	}

	h := make(http.Header)
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(HeaderDecision, string(d.Reason))
	h.Set(HeaderAgent, agentName(d.Agent))
	if rh := ruleHeader(d); rh != "" {
		h.Set(HeaderRule, rh)
	}
	if retry > 0 {
		h.Set("Retry-After", strconv.Itoa(retry))
	}
	return newResponse(r, status, h, text)
}

// newResponse returns robotsgate's own answer to r: status, header h
// (given Content-Length and Cache-Control: no-store here) and body text,
// which a HEAD request does not get.
func newResponse(r *http.Request, status int, h http.Header, text string) *http.Response {
	h.Set("Content-Length", strconv.Itoa(len(text)))
	h.Set("Cache-Control", "no-store")
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(text)),
		ContentLength: int64(len(text)),
		Request:       r,
	}
	if r.Method == http.MethodHead {
		resp.Body = http.NoBody
	}
	return resp
}

// refusalText is the plain-text body of a refusal.
func refusalText(b refusal) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\n\n", b.Error)
	fmt.Fprintf(&sb, "url:      %s\n", b.URL)
	fmt.Fprintf(&sb, "agent:    %s", b.Agent)
	if b.Agent == "*" {
		sb.WriteString(" (no agent known: only the * group applies)")
	}
	sb.WriteString("\n")
	if b.Group != "" {
		fmt.Fprintf(&sb, "group:    user-agent: %s\n", b.Group)
	}
	if b.Rule != "" {
		fmt.Fprintf(&sb, "rule:     %s", b.Rule)
		if b.Line > 0 {
			fmt.Fprintf(&sb, " (line %d)", b.Line)
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "decision: %s: %s\n", b.Decision, b.Explanation)
	if b.Detail != "" {
		fmt.Fprintf(&sb, "detail:   %s\n", b.Detail)
	}
	if rb := b.Robots; rb != nil {
		fmt.Fprintf(&sb, "robots:   %s: %s", rb.URL, rb.Status)
		if rb.HTTPStatus != 0 {
			fmt.Fprintf(&sb, ", HTTP %d", rb.HTTPStatus)
		}
		fmt.Fprintf(&sb, ", fetched %s ago", time.Duration(rb.AgeS*float64(time.Second)).Round(time.Second))
		if rb.Stale {
			sb.WriteString(" (" + staleText(rb.StaleReason) + ")")
		}
		sb.WriteString("\n")
	}
	if b.RetryAfterS > 0 {
		fmt.Fprintf(&sb, "retry:    after %d s\n", b.RetryAfterS)
	}
	return sb.String()
}

// staleText says in words why a stale robots.txt copy decided.
func staleText(reason string) string {
	switch enforce.StaleReason(reason) {
	case enforce.StaleRevalidating:
		return "stale copy: expired, decided on while it is re-fetched"
	case enforce.StaleUnreachable:
		return "stale copy: the latest fetch failed, the last good copy decided"
	case enforce.StaleFetchFailed:
		return "stale copy: expired, and its re-fetch ended without a result"
	}
	return "stale copy"
}

// upstreamError is the response sent when forwarding failed (connection
// refused, timeout, ...): 502, or 504 for a timeout. URLs quoted in err
// lose their userinfo.
func upstreamError(r *http.Request, err error) *http.Response {
	status := http.StatusBadGateway
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		status = http.StatusGatewayTimeout
	}
	text := fmt.Sprintf("robotsgate: %d %s: %s\n", status, http.StatusText(status), enforce.RedactURLsIn(err.Error()))
	h := make(http.Header)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	return newResponse(r, status, h, text)
}
