package answer

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// One decision, four shapes: the audit record (Event), the admin API's
// answer (NewDecisionJSON), the body of a refusal (newRefusalBody; both
// start from newDecisionFields) and the X-Robotsgate-* headers
// (setDecisionHeaders, SetReportHeaders). All of them are built here, from an
// enforce.Decision, and nowhere else, but for the fields of TDMRep
// (tdmrep.go) and of content use (contentuse.go), which those files add.

// Response headers robotsgate sets on answers it generates (and, in report
// mode, on forwarded responses that would have been blocked).
const (
	HeaderDecision = "X-Robotsgate-Decision" // the reason (an enforce.Reason), e.g. "disallowed"
	HeaderRule     = "X-Robotsgate-Rule"     // the deciding rule and its line, e.g. "Disallow: /private; line 3"
	HeaderAgent    = "X-Robotsgate-Agent"    // the agent decided for; "*" when none was known
	// HeaderIndex is the header that robot_tags annotate mode adds to a
	// forwarded response whose robot tags say it must not be kept; its
	// value lists the matching robot_tags.deny entries, e.g. "noindex" or
	// "noindex, none". Enforce mode sets it on its 403 as well.
	HeaderIndex = "X-Robotsgate-Index"
)

// Event is the audit record of the decision d on the request from
// client with method: auditAs is [audit.DecisionAllowed], DecisionBlocked
// or DecisionReported, status what the client got or the origin answered
// (0 when neither applies). Mode is filled in when the record is written.
func Event(client, method string, d enforce.Decision, auditAs string, status int) audit.Event {
	e := audit.Event{
		Client:           client,
		Method:           method,
		URL:              d.URL,
		Origin:           d.Origin,
		Agent:            agentName(d.Agent),
		Group:            d.Group,
		Rule:             d.Rule,
		Line:             d.Line,
		Reason:           string(d.Reason),
		Decision:         auditAs,
		RobotsStatus:     string(d.RobotsStatus),
		RobotsHTTPStatus: d.RobotsHTTPStatus,
		RobotsAge:        d.RobotsAge,
		RobotsStale:      d.RobotsStale,
		RobotsStaleWhy:   string(d.RobotsStaleReason),
		RobotsSHA256:     d.RobotsSHA256,
		TDMRepSHA256:     d.TDM.SHA256,
		LicenseSHA256:    d.License.SHA256,
		Status:           status,
		Detail:           d.Detail,
		Purposes:         d.Purposes.Names(),
		Usage:            auditUsage(&d),
		UsageDisallowed:  d.UsageBlocked.Names(),
		Site:             d.Site,
		SiteNote:         d.SiteNote,
		TDM:              auditTDM(&d),
		License:          auditLicense(&d),
	}
	auditContentUse(&e, &d)
	return e
}

// decisionFields are the fields of a decision that the admin API's
// answer ([DecisionJSON]) and a refusal's body ([RefusalBody]) both show.
type decisionFields struct {
	// Decision is what robotsgate does with the request in enforce mode:
	// [audit.DecisionAllowed] or [audit.DecisionBlocked].
	Decision    string      `json:"decision"`
	Reason      string      `json:"reason"`
	Explanation string      `json:"explanation,omitempty"` // a refusal's reason in a sentence (explain)
	Detail      string      `json:"detail,omitempty"`
	URL         string      `json:"url"`
	Origin      string      `json:"origin"`
	Agent       string      `json:"agent"` // "*" when no agent was known
	Group       string      `json:"group,omitempty"`
	Rule        string      `json:"rule,omitempty"`
	Line        int         `json:"line,omitempty"`
	Robots      *RobotsJSON `json:"robots,omitempty"`
	// Purposes are the declared purposes; UsageDisallowed those that
	// refused the URL; Usage the usage preferences ([usageOf]).
	Purposes        []string                        `json:"purposes,omitempty"`
	UsageDisallowed []string                        `json:"usage_disallowed,omitempty"`
	Usage           map[string]enforce.PurposeUsage `json:"usage,omitempty"`
	enforce.ContentUseShown
	// Site is the operator's per-site exception that applied, SiteNote
	// its note.
	Site     string   `json:"site,omitempty"`
	SiteNote string   `json:"site_note,omitempty"`
	TDM      *tdmJSON `json:"tdm,omitempty"` // TDMRep (tdmrep.go)
	// License is the RSL license verdict (license.go).
	License *licenseJSON `json:"license,omitempty"`
}

// newDecisionFields converts d.
func newDecisionFields(d enforce.Decision) decisionFields {
	decision := audit.DecisionBlocked
	if d.Allowed {
		decision = audit.DecisionAllowed
	}
	return decisionFields{
		Decision:        decision,
		Reason:          string(d.Reason),
		Detail:          d.Detail,
		URL:             d.URL,
		Origin:          d.Origin,
		Agent:           agentName(d.Agent),
		Group:           d.Group,
		Rule:            d.Rule,
		Line:            d.Line,
		Robots:          newRobotsJSON(d),
		Purposes:        d.Purposes.Names(),
		UsageDisallowed: d.UsageBlocked.Names(),
		Usage:           usageOf(&d),
		ContentUseShown: contentUseOf(&d),
		Site:            d.Site,
		SiteNote:        d.SiteNote,
		TDM:             tdmOf(&d),
		License:         licenseOf(&d),
	}
}

// DecisionJSON is the answer of GET /v1/decision: the fields a refusal
// of robotsgate carries, whether it allows, and its delays.
type DecisionJSON struct {
	Allowed bool `json:"allowed"`
	decisionFields
	CrawlDelayS float64 `json:"crawl_delay_s,omitempty"`
	RetryAfterS float64 `json:"retry_after_s,omitempty"`
}

// RobotsJSON describes the robots.txt copy a decision used.
type RobotsJSON struct {
	URL        string    `json:"url"`
	Status     string    `json:"status"`
	HTTPStatus int       `json:"http_status,omitempty"`
	FetchedAt  time.Time `json:"fetched_at"`
	AgeS       float64   `json:"age_s"`
	Stale      bool      `json:"stale,omitempty"`
	// StaleReason says why a stale copy decided: an [enforce.StaleReason].
	StaleReason string `json:"stale_reason,omitempty"`
}

// NewDecisionJSON converts d: d as GET /v1/decision answers it (and
// "robotsgate check -fetch -json" prints it).
func NewDecisionJSON(d enforce.Decision) DecisionJSON {
	return DecisionJSON{Allowed: d.Allowed, decisionFields: newDecisionFields(d),
		CrawlDelayS: d.CrawlDelay.Seconds(), RetryAfterS: d.RetryAfter.Seconds()}
}

// newRobotsJSON describes the robots.txt copy d used; nil when d did not
// consult robots.txt. 403 bodies ([newRefusalBody]) carry it too.
func newRobotsJSON(d enforce.Decision) *RobotsJSON {
	if d.RobotsStatus == "" {
		return nil
	}
	j := &RobotsJSON{
		URL:        d.Origin + "/robots.txt",
		Status:     string(d.RobotsStatus),
		HTTPStatus: d.RobotsHTTPStatus,
		FetchedAt:  d.RobotsFetchedAt.UTC(),
		AgeS:       d.RobotsAge.Round(time.Millisecond).Seconds(),
		Stale:      d.RobotsStale,
	}
	j.StaleReason = string(d.RobotsStaleReason)
	return j
}

// RefusalBody is the body of a refusal: the decision as the admin API
// shows it ([decisionFields]), with the status, a headline and the whole
// seconds of Retry-After.
type RefusalBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	decisionFields
	RetryAfterS int `json:"retry_after_s,omitempty"`
}

// newRefusalBody is the body of the refusal of d with status; fallbackURL
// is the URL shown when d has none.
func newRefusalBody(status int, d enforce.Decision, fallbackURL string) RefusalBody {
	b := RefusalBody{Error: headline(status, d), Status: status, decisionFields: newDecisionFields(d),
		RetryAfterS: retrySeconds(d.RetryAfter)}
	b.Decision, b.Explanation = audit.DecisionBlocked, explain(d)
	if b.URL == "" {
		b.URL = fallbackURL
	}
	return b
}

// headline is the first line of a refusal with status of d: what
// happened, in a few words.
func headline(status int, d enforce.Decision) string {
	if status == http.StatusForbidden && !explainedReason(d.Reason) { // most refusals: no string to build
		return "robotsgate: forbidden by robots policy"
	}
	h := "robotsgate: " + strings.ToLower(http.StatusText(status))
	switch d.Reason {
	case ReasonPortForbidden:
		port := "?"
		if u, err := url.Parse(d.URL); err == nil && u.Port() != "" {
			port = u.Port()
		}
		return h + ": CONNECT to port " + port + " is not allowed (https.allowed_ports)"
	case ReasonUpstreamError:
		return h + ": forwarding to " + originName(d) + " failed"
	case enforce.ReasonOriginUnreachable:
		if untrustedCert(d) {
			return h + ": the TLS certificate of " + originName(d) + " is not trusted (https.upstream_roots)"
		}
		return h + ": the origin " + originName(d) + " could not be reached"
	}
	return h + " by robots policy"
}

// explainedReason reports whether [headline] says more for reason than
// that the robots policy refused.
func explainedReason(reason enforce.Reason) bool {
	return reason == ReasonPortForbidden || reason == ReasonUpstreamError || reason == enforce.ReasonOriginUnreachable
}

// untrustedCert reports whether d refused a request because the origin's
// TLS certificate failed verification when its robots.txt was fetched.
func untrustedCert(d enforce.Decision) bool {
	return d.Reason == enforce.ReasonOriginUnreachable && d.RobotsErrKind == enforce.FetchTLSUntrusted
}

// UntrustedExplanation is the explanation of a refusal for an untrusted
// origin certificate: the fix first, whole, short enough for
// Proxy-Status details.
const UntrustedExplanation = "the origin's TLS certificate failed verification (unknown authority, wrong host name or expired), " +
	"so neither its robots.txt nor the URL was fetched; if you trust the origin, add its root CA to https.upstream_roots"

// originName is d's origin, or its URL when it has none.
func originName(d enforce.Decision) string {
	if d.Origin != "" {
		return d.Origin
	}
	return d.URL
}

// retrySeconds is d rounded up to whole seconds, as Retry-After says it.
func retrySeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// setDecisionHeaders sets the X-Robotsgate-* headers of d, and
// Retry-After when d has one, with hs.
func setDecisionHeaders(hs *headerSetter, d enforce.Decision) {
	hs.set(HeaderDecision, string(d.Reason))
	hs.set(HeaderAgent, WithoutControl(agentName(d.Agent), -1))
	if rh := ruleHeader(d); rh != "" {
		hs.set(HeaderRule, rh)
	}
	if retry := retrySeconds(d.RetryAfter); retry > 0 {
		hs.set("Retry-After", strconv.Itoa(retry))
	}
}

// SetReportHeaders marks a forwarded response that report mode let
// through although d would have refused it.
func SetReportHeaders(h http.Header, d enforce.Decision) {
	h.Set(HeaderDecision, "report-only; "+string(d.Reason))
	if rh := ruleHeader(d); rh != "" {
		h.Set(HeaderRule, rh)
	}
}

// agentName is how answers name the agent: "*" when none was known.
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
	return WithoutControl(r, -1)
}

// refusalText is the plain-text body of a refusal.
func refusalText(b RefusalBody) string {
	var sb strings.Builder
	sb.Grow(512)
	w := func(parts ...string) {
		for _, p := range parts {
			sb.WriteString(p)
		}
	}
	w(b.Error, "\n\n")
	sb.WriteString("url:      ")
	w(b.URL, "\n")
	sb.WriteString("agent:    ")
	sb.WriteString(b.Agent)
	if b.Agent == "*" {
		sb.WriteString(" (no agent known: only the * group applies)")
	}
	sb.WriteString("\n")
	if b.Group != "" {
		sb.WriteString("group:    user-agent: ")
		w(b.Group, "\n")
	}
	if b.Rule != "" {
		sb.WriteString("rule:     ")
		w(b.Rule)
		if b.Line > 0 {
			w(" (line ", strconv.Itoa(b.Line), ")")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("reason:   ")
	w(b.Reason, ": ", b.Explanation, "\n")
	if b.Detail != "" {
		sb.WriteString("detail:   ")
		w(b.Detail, "\n")
	}
	if b.Site != "" {
		sb.WriteString("site:     ")
		w(b.Site)
		if b.SiteNote != "" {
			w(" (", b.SiteNote, ")")
		}
		sb.WriteString("\n")
	}
	usageText(&sb, b.Purposes, b.Usage)
	contentUseText(&sb, b.ContentUseShown)
	tdmText(&sb, b.TDM)
	licenseText(&sb, b.License)
	if b.Robots != nil {
		robotsText(&sb, b.Robots)
	}
	if b.RetryAfterS > 0 {
		sb.WriteString("retry:    after ")
		w(strconv.Itoa(b.RetryAfterS), " s\n")
	}
	return sb.String()
}

// robotsText writes the robots line of a refusal's text body: which
// robots.txt decided, its state and age.
func robotsText(sb *strings.Builder, rb *RobotsJSON) {
	sb.WriteString("robots:   ")
	for _, p := range []string{rb.URL, ": ", rb.Status} {
		sb.WriteString(p)
	}
	if rb.HTTPStatus != 0 {
		sb.WriteString(", HTTP " + strconv.Itoa(rb.HTTPStatus))
	}
	sb.WriteString(", fetched " + time.Duration(rb.AgeS*float64(time.Second)).Round(time.Second).String() + " ago")
	if rb.Stale {
		sb.WriteString(" (" + staleText(rb.StaleReason) + ")")
	}
	sb.WriteString("\n")
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
