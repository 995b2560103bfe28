package answer

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// HeaderProxyStatus is the RFC 9209 header that every answer robotsgate
// writes itself carries: which intermediary answered ("robotsgate"),
// the RFC 9209 error type and, in details, what happened.
const HeaderProxyStatus = "Proxy-Status"

// RFC 9209 section 2.3 error types robotsgate answers with.
const (
	PSDenied          = "http_request_denied"     // a policy refusal: robots.txt, politeness, access, ports
	PSRequestError    = "http_request_error"      // the request itself cannot be served: URL too long, misdirected, no host
	PSInternal        = "proxy_internal_response" // answered locally for robotsgate's own reasons (client gone)
	PSDNS             = "dns_error"
	PSRefused         = "connection_refused"
	PSTerminated      = "connection_terminated"
	PSConnTimeout     = "connection_timeout"
	PSResponseTimeout = "http_response_timeout"
	PSTLSCertificate  = "tls_certificate_error"
	PSTLSProtocol     = "tls_protocol_error"
	PSIPProhibited    = "destination_ip_prohibited"
	PSUnavailable     = "destination_unavailable"
)

// ProxyStatusError is the RFC 9209 error type of the refusal d: its
// reason's ([reasons]), or, for a failure to reach the origin, the
// failure's; err is the forwarding error of an upstream failure, nil for
// the others.
func ProxyStatusError(d enforce.Decision, err error) string {
	switch {
	case err != nil:
		return forwardErrorType(err)
	case d.Reason == enforce.ReasonOriginUnreachable:
		return kindErrorType(d.RobotsErrKind)
	}
	if row, ok := reasonOf(d.Reason); ok && row.proxyStatus != "" {
		return row.proxyStatus
	}
	return PSDenied
}

// kindErrorType maps the kind of a failed robots.txt fetch that never
// reached the origin to an RFC 9209 error type.
func kindErrorType(k enforce.FetchErrorKind) string {
	switch k {
	case enforce.FetchDNS:
		return PSDNS
	case enforce.FetchRefused:
		return PSRefused
	case enforce.FetchReset:
		return PSTerminated
	case enforce.FetchTimeout:
		return PSConnTimeout
	case enforce.FetchTLSUntrusted:
		return PSTLSCertificate
	case enforce.FetchTLS:
		return PSTLSProtocol
	}
	return PSUnavailable
}

// forwardErrorType maps an error of forwarding a request to an RFC 9209
// error type.
func forwardErrorType(err error) string {
	var op *net.OpError
	switch k := enforce.ErrorKind(err); {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return PSTerminated // closed before any part of the response arrived
	case k == enforce.FetchTimeout && !(errors.As(err, &op) && op.Op == "dial"):
		return PSResponseTimeout
	case errors.Is(err, selfaddr.ErrSelfDial), errors.Is(err, enforce.ErrDestinationPrivate):
		return PSIPProhibited
	default:
		return kindErrorType(k)
	}
}

// SetProxyStatus sets the Proxy-Status header on h: robotsgate, the
// error type errType and details, serialized as an RFC 9651 structured
// field (so that quotes and backslashes are escaped; bytes a structured
// string cannot hold become '?').
func SetProxyStatus(h http.Header, errType, details string) {
	h[HeaderProxyStatus] = []string{proxyStatusValue(errType, details)}
}

// proxyStatusValue is the Proxy-Status field value naming robotsgate with
// the error type errType (an RFC 9651 token) and, unless empty, details
// (made an RFC 9651 string by [sfString]): what httpsfv.Marshal writes for
// that one-item list, written directly since every refusal carries one.
func proxyStatusValue(errType, details string) string {
	if !sfToken(errType) { // cannot happen with the ps* types; say so rather than drop the header
		return "robotsgate; error=" + errType
	}
	details = sfString(details)
	var b strings.Builder
	b.Grow(len("robotsgate;error=;details=\"\"") + len(errType) + len(details) + 8)
	b.WriteString("robotsgate;error=")
	b.WriteString(errType)
	if details != "" {
		b.WriteString(`;details="`)
		for i := 0; i < len(details); i++ {
			if c := details[i]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(details[i])
		}
		b.WriteByte('"')
	}
	return b.String()
}

// printableASCII reports whether s holds only printable ASCII (space to
// tilde).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// sfToken reports whether s is an RFC 9651 token: ALPHA or "*" first,
// then tchar, ":" or "/".
func sfToken(s string) bool {
	if s == "" || !(s[0] == '*' || ('a' <= s[0] && s[0] <= 'z') || ('A' <= s[0] && s[0] <= 'Z')) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		alnum := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if !alnum && !strings.ContainsRune("!#$%&'*+-.^_`|~:/", rune(c)) {
			return false
		}
	}
	return true
}

// maxDetails bounds the details parameter of Proxy-Status.
const maxDetails = 300

// sfString makes s an RFC 9651 string's content: printable ASCII only,
// at most [maxDetails] bytes.
func sfString(s string) string {
	if len(s) <= maxDetails && printableASCII(s) {
		return s
	}
	b := []byte(s)
	if len(b) > maxDetails {
		b = append(b[:maxDetails-3], "..."...)
	}
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	return string(b)
}
