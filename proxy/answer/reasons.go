package answer

import (
	"net/http"
	"slices"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
)

// The table of reasons: every reason a decision of robotsgate can carry
// (its own, enforce's and politeness's), with what the decision does, the
// status and RFC 9209 error type of its refusal, its explanation and when
// it is audited. The metrics' pre-created counters ([KnownReasons]), the
// explanation of a refusal ([explain]), the status of a refusal
// ([Status]) and its Proxy-Status error type ([ProxyStatusError])
// are read from it; the reason table of docs/decisions.md is written from
// it, and TestReasonsTableComplete checks that every declared reason has
// a row.

// Reasons of the decisions the proxy makes itself, beside the robots.txt
// ones of package enforce and the politeness ones of package politeness.
// Their values are what audit records, the X-Robotsgate-Decision header
// and the metrics' reason label carry.
const (
	ReasonRobotTag         enforce.Reason = "robot-tag"         // the response carried a "do not keep" robot tag
	ReasonTunnelUnenforced enforce.Reason = "tunnel-unenforced" // CONNECT tunnel opened, paths not enforced
	ReasonPortForbidden    enforce.Reason = "port-forbidden"    // CONNECT to a port not in the allow-list
	ReasonSiteDisallowed   enforce.Reason = "site-disallowed"   // tunnel mode: the whole site is disallowed
	ReasonTunnelNotTLS     enforce.Reason = "tunnel-not-tls"    // tunnel mode: the bytes inside the tunnel are not a TLS ClientHello
	// ReasonTunnelServerName: tunnel mode, the ClientHello names another
	// host than the CONNECT target, or none for a CONNECT to a name.
	ReasonTunnelServerName enforce.Reason = "tunnel-server-name"
	// ReasonTunnelECH: tunnel mode, the ClientHello encrypts the server
	// name it means (ECH), which robotsgate cannot read.
	ReasonTunnelECH     enforce.Reason = "tunnel-ech"
	ReasonSelfRequest   enforce.Reason = "self-request"   // the destination is robotsgate itself (proxy or admin port)
	ReasonMisdirected   enforce.Reason = "misdirected"    // a request inside an MITM session names another host:port than its CONNECT
	ReasonAccessRevoked enforce.Reason = "access-revoked" // a reload revoked the access an MITM session's CONNECT was admitted with
	ReasonShuttingDown  enforce.Reason = "shutting-down"  // robotsgate shut down while the request waited for its crawl-delay slot
	ReasonURLTooLong    enforce.Reason = "url-too-long"   // the URL is longer than max_url_bytes: answered 414 undecided
	// ReasonAgentTooLong: the robots agent the client names (its
	// User-Agent's crawler token, or an override header) is longer than
	// robotsgate accepts; answered 431 undecided.
	ReasonAgentTooLong  enforce.Reason = "agent-too-long"
	ReasonUpstreamError enforce.Reason = "upstream-error" // forwarding failed: no response from the origin (502/504)
	// ReasonInvalidPurpose: the request's purposes header, which the
	// operator lets clients use, names an unknown purpose; answered 400.
	ReasonInvalidPurpose enforce.Reason = "invalid-purpose"
	// ReasonResponseUnscannable: a step that may refuse the response (robot_tags
	// or usage.response enforce) needs to read it whole, and the response
	// is partial or in a content coding robotsgate cannot decode.
	ReasonResponseUnscannable enforce.Reason = "response-unscannable"
)

// Reasons of the transparent listener's refusals (transparent.go).
const (
	ReasonDestinationMismatch enforce.Reason = "destination-mismatch" // Host or SNI is not the original destination (409)
	ReasonNotRedirected       enforce.Reason = "not-redirected"       // a connection to the transparent port that was not redirected
	ReasonRedirectLoop        enforce.Reason = "redirect-loop"        // robotsgate's own outbound connection came back to it (508)
	ReasonUnknownProtocol     enforce.Reason = "unknown-protocol"     // neither HTTP/1.x nor TLS: closed
	ReasonNoSNI               enforce.Reason = "no-sni"               // a ClientHello without a server name: closed, never spliced
)

// Reasons of the operator's per-site exceptions (the sites: setting, robots.go).
const (
	// ReasonSiteDenied: a deny exception covers the site; nothing was
	// fetched from it, not even robots.txt.
	ReasonSiteDenied enforce.Reason = "site-denied"
	// ReasonSiteException: an allow exception (written permission) covers
	// the site; the request was decided, audited and forwarded whatever
	// robots.txt says.
	ReasonSiteException enforce.Reason = "site-exception"
)

// auditWhen says which decisions of a reason are audited.
type auditWhen int

const (
	auditAlways  auditWhen = iota // every decision (refusals, report-mode would-be refusals, tunnels)
	auditWithAll                  // with audit: all, or when the request carried a refused override
	auditNever                    // never: nothing was decided
)

// String is how docs/decisions.md says it.
func (a auditWhen) String() string {
	switch a {
	case auditAlways:
		return "always"
	case auditWithAll:
		return "with audit: all"
	}
	return "never"
}

// reasonRow is one reason of the table of reasons.
type reasonRow struct {
	reason enforce.Reason
	// allows says that decisions with this reason let the request go on
	// ([audit.DecisionAllowed]); the others refuse it (DecisionBlocked, or
	// DecisionReported in report mode where the reason lets it).
	allows bool
	// status is the status of the refusal (0 when the reason never
	// refuses); timeoutStatus, when not 0, the status when the origin did
	// not answer in time.
	status, timeoutStatus int
	// proxyStatus is the RFC 9209 error type of the refusal; "" when it
	// is the one of the failure that caused it ([ProxyStatusError]).
	proxyStatus string
	// explanation says in one sentence why a decision with this reason
	// was made: the "explanation" of a refusal's body.
	explanation string
	audited     auditWhen
}

// reasons is the table of reasons, in the order docs/decisions.md lists
// them: allowing reasons first, then the robots step's, the request's,
// the politeness, HTTPS and response ones.
var reasons = []reasonRow{
	{reason: enforce.ReasonAllowed, allows: true, audited: auditWithAll,
		explanation: "no rule, or an Allow rule, of the robots.txt group for this agent matched the URL"},
	{reason: enforce.ReasonRobotsTxt, allows: true, audited: auditWithAll,
		explanation: "a GET or HEAD of /robots.txt itself is always allowed"},
	{reason: enforce.ReasonRobotsUnavailable, allows: true, audited: auditWithAll,
		explanation: "the origin has no robots.txt (4xx, or too many redirects), so every URL is allowed"},
	{reason: ReasonTunnelUnenforced, allows: true, audited: auditAlways,
		explanation: "tunnel mode opened the CONNECT: the host is open to this agent, but paths inside the tunnel are not checked"},
	{reason: ReasonSiteException, allows: true, audited: auditAlways,
		explanation: "an allow exception of the operator (written permission) covers the site: the request was forwarded whatever robots.txt says"},
	{reason: enforce.ReasonDisallowed, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the robots.txt group for this agent disallows this URL"},
	{reason: enforce.ReasonRobotsUnreachable, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the origin's robots.txt could not be fetched (server error, 429, unreadable answer), so every URL of the origin is disallowed until it can be"},
	{reason: enforce.ReasonOriginUnreachable, status: http.StatusBadGateway, timeoutStatus: http.StatusGatewayTimeout,
		explanation: "the origin could not be reached (DNS, connection, TLS or timeout) to fetch its robots.txt, so the request was not forwarded; robots.txt is fetched again soon"},
	{reason: enforce.ReasonUsageDisallowed, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the site's usage preferences disallow a purpose this crawler declared"},
	{reason: enforce.ReasonInvalidURL, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the URL has no origin (scheme and host) to fetch robots.txt from"},
	{reason: enforce.ReasonInvalidHost, status: http.StatusBadRequest, proxyStatus: PSRequestError,
		explanation: "the host has no canonical spelling (invalid IDNA, characters no host name holds, an empty label, or an IPv4 shorthand)"},
	{reason: ReasonInvalidPurpose, status: http.StatusBadRequest, proxyStatus: PSRequestError,
		explanation: "the purposes header names an unknown purpose (allowed values are train-ai, search, ai-input, or none)"},
	{reason: ReasonURLTooLong, status: http.StatusRequestURITooLong, proxyStatus: PSRequestError,
		explanation: "the URL is longer than max_url_bytes, too long to decide at a bounded cost, so it was refused without a robots.txt decision"},
	{reason: ReasonAgentTooLong, status: http.StatusRequestHeaderFieldsTooLarge, proxyStatus: PSRequestError,
		explanation: "the agent the request names (its User-Agent's crawler token, or an agent override header) is longer than 128 bytes, longer than any product token, so it was refused without a robots.txt decision"},
	{reason: ReasonSiteDenied, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the operator of this robotsgate denies every request to this site (a per-site exception in sites:)"},
	{reason: ReasonSelfRequest, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the destination is robotsgate itself (its proxy or admin address), which is not reachable through the proxy"},
	{reason: enforce.ReasonDestinationPrivate, status: http.StatusForbidden, proxyStatus: PSIPProhibited,
		explanation: "the destination address, or one its robots.txt led to, is link-local, cloud metadata or private (egress.private, egress.allow_cidrs, egress.deny_cidrs), and robotsgate does not connect to it"},
	{reason: ReasonMisdirected, status: http.StatusMisdirectedRequest, proxyStatus: PSRequestError,
		explanation: "inside an HTTPS session a request must name the host and port of its CONNECT"},
	{reason: ReasonAccessRevoked, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "a configuration reload revoked the proxy access (credentials or client network) this HTTPS session's CONNECT was admitted with; the session ends, and a new CONNECT must authenticate again"},
	{reason: politeness.ReasonOriginPaused, status: http.StatusServiceUnavailable, proxyStatus: PSDenied,
		explanation: "the origin asked crawlers to back off (503/429); robotsgate holds requests to it until the pause ends"},
	{reason: politeness.ReasonCrawlDelayWait, status: http.StatusTooManyRequests, proxyStatus: PSDenied,
		explanation: "waiting for the origin's crawl-delay would take longer than allowed"},
	{reason: ReasonShuttingDown, status: http.StatusServiceUnavailable, proxyStatus: PSDenied,
		explanation: "robotsgate began shutting down while the request waited for its crawl-delay slot, so it was not forwarded"},
	{reason: ReasonPortForbidden, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "CONNECT is allowed only to the ports in https.allowed_ports"},
	{reason: ReasonSiteDisallowed, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "robots.txt disallows the whole site for this agent"},
	{reason: ReasonTunnelNotTLS, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "tunnel mode decides hosts only: inside a CONNECT tunnel only TLS goes through, and plain HTTP, whose paths it cannot check, is refused"},
	{reason: ReasonTunnelServerName, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "tunnel mode: the TLS ClientHello inside the tunnel named another server than the CONNECT target (or none, for a CONNECT to a name), so the tunnel was closed"},
	{reason: ReasonTunnelECH, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "tunnel mode: the TLS ClientHello inside the tunnel encrypts the server name it is for (ECH), which robotsgate cannot check, so the tunnel was closed"},
	{reason: ReasonUpstreamError, status: http.StatusBadGateway, timeoutStatus: http.StatusGatewayTimeout,
		explanation: "the request was allowed and forwarded, but no response came from the origin"},
	{reason: enforce.ReasonTDMReserved, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the site reserves its text and data mining rights for this URL (W3C TDMRep), and this crawler declared a mining purpose"},
	{reason: enforce.ReasonTDMUnknown, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the site's tdmrep.json could not be read, so whether it reserves text and data mining rights is not known, and usage.unknown is deny"},
	{reason: enforce.ReasonLicenseProhibited, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the site's RSL license does not permit a purpose this crawler declared for this URL"},
	{reason: enforce.ReasonLicenseRequired, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the site's RSL license grants the declared purposes only with a license token (a License Server, a paid license), and license.tokens holds none for its server"},
	{reason: enforce.ReasonLicenseUnknown, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "a license document the site's robots.txt names could not be read, so its terms are not known, and usage.unknown is deny"},
	{reason: ReasonRobotTag, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the response carried a robot tag saying it must not be kept"},
	{reason: ReasonResponseUnscannable, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the response could not be read as a whole document (a partial response, or a content coding robotsgate cannot decode), and a robot-tag or usage check that may refuse it needs to read it"},
	{reason: ReasonDestinationMismatch, status: http.StatusConflict, proxyStatus: PSDenied,
		explanation: "on a redirected connection, the Host header or the TLS server name is not the connection's original destination"},
	{reason: ReasonNotRedirected, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "the connection reached the transparent listener without being redirected to it, so it has no original destination"},
	{reason: ReasonRedirectLoop, status: http.StatusLoopDetected, proxyStatus: PSDenied,
		explanation: "robotsgate's own outbound connection was redirected back to it: the redirect rule must exclude robotsgate's uid"},
	{reason: ReasonUnknownProtocol, status: http.StatusBadRequest, proxyStatus: PSRequestError,
		explanation: "a redirected connection spoke neither HTTP/1.x nor TLS, so robotsgate closed it"},
	{reason: ReasonNoSNI, status: http.StatusForbidden, proxyStatus: PSDenied,
		explanation: "a redirected TLS connection named no server, so robotsgate cannot decide it and closed it"},
	// HTTP 402 pay-per-crawl (payment.go): the origin's answer goes to the client, audited.
	{reason: ReasonPaid, allows: true, audited: auditAlways,
		explanation: "the origin quoted a price within max_price and every budget; robotsgate paid it (a signed retry with crawler-exact-price) and the origin served the request"},
	{reason: ReasonPaymentQuoted, allows: true, audited: auditAlways,
		explanation: "payment.mode is report: the origin's 402 and its quoted price passed through unpaid"},
	{reason: ReasonPaymentOverCap, allows: true, audited: auditAlways,
		explanation: "the origin's price is above payment.max_price (or in another currency), so it was not paid: the origin's 402 passed through"},
	{reason: ReasonBudgetExhausted, allows: true, audited: auditAlways,
		explanation: "paying the origin's price would exceed a payment budget, so it was not paid: the origin's 402 passed through"},
	{reason: ReasonPaymentUnsupported, allows: true, audited: auditAlways,
		explanation: "the origin asks for a payment robotsgate never makes (an x402 or WWW-Authenticate challenge, a method other than GET or HEAD, a free path): its 402 passed through"},
	{reason: ReasonPaymentFailed, allows: true, audited: auditAlways,
		explanation: "the payment could not be made (an unreadable price, the wallet unavailable, the paid retry failed or was refused): nothing was paid and the origin's answer passed through"},
	{reason: ReasonPaymentUnconfirmed, allows: true, audited: auditAlways,
		explanation: "the paid retry was served without crawler-charged: the reservation was released and nothing recorded as spent"},
	{reason: ReasonPaymentError, allows: true, audited: auditAlways,
		explanation: "the origin answered with a crawler-error code (stop, fix, re-quote or back off): nothing was paid and its answer passed through"},
	{reason: enforce.ReasonClientGone, status: http.StatusServiceUnavailable, proxyStatus: PSInternal, audited: auditNever,
		explanation: "the client went away before robotsgate decided; nothing is audited or counted"},
}

// reasonOf returns the row of reason r, and whether the table has one.
func reasonOf(r enforce.Reason) (reasonRow, bool) {
	i := slices.IndexFunc(reasons, func(row reasonRow) bool { return row.reason == r })
	if i < 0 {
		return reasonRow{}, false
	}
	return reasons[i], true
}

// KnownReasons returns the Reasons whose decision counters are
// pre-created, each with whether its decisions allow the request: every
// row of the table that is counted (not client-gone).
func KnownReasons() map[enforce.Reason]bool {
	m := make(map[enforce.Reason]bool, len(reasons))
	for _, row := range reasons {
		if row.audited != auditNever {
			m[row.reason] = row.allows
		}
	}
	return m
}

// explain says in one sentence why d was decided so: its reason's
// explanation (for an origin whose certificate failed verification, what
// that means: [UntrustedExplanation]), or the reason itself for one the
// table lacks.
func explain(d enforce.Decision) string {
	if d.Reason == enforce.ReasonOriginUnreachable && untrustedCert(d) {
		return UntrustedExplanation
	}
	if row, ok := reasonOf(d.Reason); ok {
		return row.explanation
	}
	return string(d.Reason)
}

// Status is the status of the refusal d: its reason's, or, for a
// reason with a timeout status, that one when robots.txt's fetch timed
// out. An unknown reason is refused with 403.
func Status(d enforce.Decision) int {
	return StatusOf(d.Reason, d.RobotsErrKind == enforce.FetchTimeout)
}

// StatusOf is the status of a refusal with reason r; timedOut says that
// the origin did not answer in time.
func StatusOf(r enforce.Reason, timedOut bool) int {
	row, ok := reasonOf(r)
	switch {
	case !ok || row.status == 0:
		return http.StatusForbidden
	case timedOut && row.timeoutStatus != 0:
		return row.timeoutStatus
	}
	return row.status
}

// ReasonNames returns the name of every reason of the table, sorted:
// every reason a request's audit record can carry.
func ReasonNames() []string {
	names := make([]string, 0, len(reasons))
	for _, row := range reasons {
		names = append(names, string(row.reason))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Explain says in one sentence why d was decided so, as a refusal's
// body and Proxy-Status do: for an untrusted origin certificate, the
// setting that fixes it.
func Explain(d enforce.Decision) string { return explain(d) }
