package enforce

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
)

// FetchErrorKind classifies why a robots.txt fetch failed.
type FetchErrorKind string

// The kinds of [FetchError].
const (
	FetchTimeout      FetchErrorKind = "timeout"       // the fetch or its body took too long
	FetchDNS          FetchErrorKind = "dns"           // the host name did not resolve
	FetchRefused      FetchErrorKind = "refused"       // the connection was refused
	FetchReset        FetchErrorKind = "reset"         // the connection was reset or broken
	FetchTLSUntrusted FetchErrorKind = "tls-untrusted" // the certificate failed verification: unknown authority, wrong host name, expired, ...
	FetchTLS          FetchErrorKind = "tls"           // any other TLS failure
	FetchTooLarge     FetchErrorKind = "too-large"     // a coded body far longer than its decoded limit
	FetchDecode       FetchErrorKind = "decode"        // a Content-Encoding that cannot be decoded
	FetchRedirect     FetchErrorKind = "redirect"      // a redirect that cannot be followed
	FetchStatus       FetchErrorKind = "status"        // an HTTP status that makes the result unreachable or unavailable
	FetchBadURL       FetchErrorKind = "bad-url"       // the robots.txt URL is malformed
	FetchOther        FetchErrorKind = "other"         // none of the above
)

// FetchError is why a robots.txt fetch failed. Find it with [errors.As].
type FetchError struct {
	Kind FetchErrorKind
	Err  error
}

func (e *FetchError) Error() string { return e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// Error returns r's failure as a *[FetchError], nil when the fetch did not
// fail.
func (r FetchResult) Error() error {
	if r.Err == "" && r.ErrKind == "" {
		return nil
	}
	return &FetchError{Kind: r.ErrKind, Err: errors.New(r.Err)}
}

// NotReached reports whether a failure of kind k happened before the
// origin answered anything: it could not be found, connected to or
// trusted, or it did not answer in time. Such a failure costs the origin
// nothing, so robots.txt is fetched again soon.
func (k FetchErrorKind) NotReached() bool {
	switch k {
	case FetchTimeout, FetchDNS, FetchRefused, FetchReset, FetchTLSUntrusted, FetchTLS:
		return true
	}
	return false
}

// ErrorKind classifies an error of an HTTP round trip (a robots.txt
// fetch or a forwarded request).
func ErrorKind(err error) FetchErrorKind { return errorKind(err) }

// errorKind classifies an error of the HTTP client or of reading a body.
func errorKind(err error) FetchErrorKind {
	var (
		ne       net.Error
		dns      *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		alert    tls.AlertError
		recHdr   tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, ErrDestinationPrivate):
		return FetchDestinationPrivate
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return FetchTimeout
	case errors.As(err, &dns):
		return FetchDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return FetchRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return FetchReset
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		return FetchTLSUntrusted
	case errors.As(err, &alert), errors.As(err, &recHdr):
		return FetchTLS
	case errors.Is(err, errCodedTooLong):
		return FetchTooLarge
	case errors.Is(err, errRedirectScheme):
		return FetchRedirect
	case errors.As(err, new(decodeError)):
		return FetchDecode
	}
	return FetchOther
}
