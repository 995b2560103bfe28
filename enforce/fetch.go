package enforce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// HTTPFetcher is the Fetcher that GETs origin + "/robots.txt" over HTTP
// and classifies the result as RFC 9309 §2.3.1 does, choosing what
// cannot open a site by accident where the RFC is silent:
//
//   - 2xx: StatusOK, whatever its Content-Type; the body, decoded as
//     its Content-Encoding says (gzip, x-gzip, deflate, also stacked),
//     is read up to MaxBytes decoded bytes, the rest is ignored
//     (Truncated is set) and never decoded. A coding it cannot decode, a
//     corrupt stream or an error while reading the body makes the result
//     StatusUnreachable.
//   - 3xx: redirects (301, 302, 303, 307, 308) are followed, also across
//     hosts, up to MaxRedirects; one more makes the result
//     StatusUnavailable. A redirect to a scheme other than http and https,
//     a 3xx without Location or of another code (300, 305, ...), and a
//     304 answering a request that was not conditional are
//     StatusUnreachable. A 304 answering a conditional request (the
//     validators in ctx, [withValidators]) is StatusOK with NotModified
//     set and no body: the Enforcer keeps its copy (revalidate.go).
//   - 4xx other than 429, including 401 and 403: StatusUnavailable.
//   - 429, 5xx, 1xx and other statuses, timeouts (also of a body that
//     stalls), DNS and connection errors: StatusUnreachable.
//
// The fields must not be changed once Fetch has been called. An
// HTTPFetcher is safe for concurrent use.
type HTTPFetcher struct {
	// Transport sends the requests; robotsgate passes a transport of
	// its own ([proxy.NewPolicyTransport]), which never carries a byte a
	// client chose: a connection shared with proxied traffic can be
	// desynchronised by a client so that the fetch reads an answer meant
	// for another request. nil means a private clone of
	// [http.DefaultTransport] that uses no proxy (HTTP_PROXY and friends
	// in the environment are ignored).
	Transport http.RoundTripper
	// UserAgent is the User-Agent header of the fetches (robots.user_agent;
	// "" leaves net/http's own).
	UserAgent string
	// MaxBytes is how much of a body is read, counted after decoding its
	// Content-Encoding (robots.max_bytes). 0 means [robots.DefaultMaxBytes],
	// the RFC 9309 minimum, below which no robots.txt may be cut.
	MaxBytes int
	// MaxRedirects is how many redirects are followed (robots.max_redirects);
	// 0 (or a negative value) follows none.
	MaxRedirects int
	// Timeout bounds one fetch, redirects and body included
	// (robots.fetch_timeout); 0 leaves only the ctx passed to Fetch (the
	// Enforcer's [Config.FetchTimeout]) to bound it.
	Timeout time.Duration

	once sync.Once
	tr   http.RoundTripper
}

// errRedirectScheme refuses a redirect to a URL that is not http or https.
var errRedirectScheme = errors.New("redirect to a scheme other than http and https")

// fetch fetches the document key names, from the key's address when it
// has one ([FetchPinOf]): the one place that dispatches on the kind of
// document.
func (e *Enforcer) fetch(ctx context.Context, key Key) FetchResult {
	ctx = withFetchPin(ctx, key)
	switch key.Doc() {
	case DocTDMRep:
		ff, ok := e.fetcher.(FileFetcher)
		if !ok {
			return FetchResult{Status: StatusUnavailable, Err: "the fetcher cannot fetch tdmrep.json", ErrKind: FetchOther}
		}
		return ff.FetchFile(ctx, key.Origin(), tdmrep.WellKnownPath, tdmAccept)
	case DocLicense:
		return e.fetchLicense(ctx, key.URL())
	}
	return e.fetcher.Fetch(ctx, key.Origin())
}

// fileOf names the policy file at target (a URL) in messages: the last
// segment of its path ("robots.txt", "tdmrep.json").
func fileOf(target string) string {
	target, _, _ = strings.Cut(target, "?")
	if i := strings.LastIndexByte(target, '/'); i >= 0 && i < len(target)-1 && strings.Contains(target[:i], "://") {
		return target[i+1:]
	}
	return "policy file"
}

// Fetch fetches origin's robots.txt ("scheme://host[:port]", as returned
// by Origin). It never returns an empty Status.
func (f *HTTPFetcher) Fetch(ctx context.Context, origin string) FetchResult {
	return f.FetchFile(ctx, origin, "/robots.txt", "text/plain, */*;q=0.1")
}

// FetchFile fetches the policy file at path (absolute, e.g.
// "/.well-known/tdmrep.json") of origin, asking for the media types
// accept, with the rules and limits of Fetch. It never returns an empty
// Status.
func (f *HTTPFetcher) FetchFile(ctx context.Context, origin, path, accept string) FetchResult {
	maxBytes := f.MaxBytes
	if maxBytes <= 0 {
		maxBytes = robots.DefaultMaxBytes
	}
	maxRedirects := max(f.MaxRedirects, 0)
	target := origin + path
	ctx, cancel := f.bound(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		// A malformed origin cannot be fetched now or later.
		return FetchResult{Status: StatusUnreachable, FinalURL: target, Err: fmt.Sprintf("bad %s URL: %v", fileOf(target), err), ErrKind: FetchBadURL}
	}
	req.Header = fetchHeader(f.UserAgent, accept)
	conditional := setValidators(req.Header, ctx)

	tooMany := false
	client := &http.Client{
		Transport: f.transport(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if s := req.URL.Scheme; s != "http" && s != "https" {
				return fmt.Errorf("%w: %s", errRedirectScheme, RedactedURL(req.URL))
			}
			// via holds the requests made so far: len(via) is the number
			// of the redirect about to be followed.
			if len(via) > maxRedirects {
				tooMany = true
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		// The error quotes the URL that failed, which may be a redirect's
		// with userinfo (net/http keeps the user name).
		return FetchResult{Status: StatusUnreachable, FinalURL: RedactURLsIn(finalURL(err, target)),
			Err: RedactURLsIn(fetchErr(err)), ErrKind: errorKind(err)}
	}
	defer resp.Body.Close()

	r := FetchResult{HTTPStatus: resp.StatusCode, FinalURL: RedactedURL(resp.Request.URL)} // a redirect may carry credentials
	if cacheHeaders(&r, resp, conditional) {                                               // a 304 to a conditional request
		return r
	}
	if code := resp.StatusCode; code >= 200 && code <= 299 {
		body, truncated, err := readBody(resp, maxBytes)
		if err != nil {
			return FetchResult{Status: StatusUnreachable, HTTPStatus: code, FinalURL: r.FinalURL,
				Err: "reading " + fileOf(target) + " body: " + RedactURLsIn(fetchErr(err)), ErrKind: errorKind(err)}
		}
		r.Status, r.Body, r.Truncated = StatusOK, body, truncated
		return r
	}
	r.Status, r.Err, r.ErrKind = classify(resp, tooMany, maxRedirects)
	// Let the connection be reused if little is left to read.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	return r
}

// bound returns ctx with the deadline of [HTTPFetcher.Timeout], if any.
// The context's deadline, not the client's Timeout, bounds the fetch, its
// body read included: the same bound without the client's own timer and
// goroutine.
func (f *HTTPFetcher) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, f.Timeout)
}

// fetchHeader returns the header of a policy-file request: its three
// values share one array, each slice capped at its one value so that an
// added value copies instead of overwriting its neighbour.
func fetchHeader(userAgent, accept string) http.Header {
	v := [...]string{accept, acceptEncoding, userAgent}
	h := make(http.Header, 3)
	h["Accept"] = v[0:1:1]
	h["Accept-Encoding"] = v[1:2:2]
	if userAgent != "" {
		h["User-Agent"] = v[2:3:3]
	}
	return h
}

// classify returns the Status of a response that is not 2xx, and why.
// tooMany says the client stopped following redirects at the limit.
func classify(resp *http.Response, tooMany bool, maxRedirects int) (Status, string, FetchErrorKind) {
	switch code := resp.StatusCode; {
	case code == http.StatusNotModified:
		return StatusUnreachable, "HTTP 304 Not Modified answering an unconditional request", FetchStatus
	case code >= 300 && code <= 399 && tooMany:
		return StatusUnavailable, fmt.Sprintf("too many redirects (more than %d)", maxRedirects), FetchRedirect
	case code >= 300 && code <= 399 && resp.Header.Get("Location") == "":
		return StatusUnreachable, fmt.Sprintf("HTTP %d redirect without a Location", code), FetchRedirect
	case code >= 300 && code <= 399:
		return StatusUnreachable, fmt.Sprintf("HTTP %d redirect that cannot be followed", code), FetchRedirect
	case code == http.StatusTooManyRequests:
		return StatusUnreachable, "HTTP 429 Too Many Requests", FetchStatus
	case code >= 400 && code <= 499:
		return StatusUnavailable, "HTTP " + resp.Status, FetchStatus
	}
	return StatusUnreachable, "HTTP " + resp.Status, FetchStatus
}

func (f *HTTPFetcher) transport() http.RoundTripper {
	if f.Transport != nil {
		return f.Transport
	}
	f.once.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		f.tr = t
	})
	return f.tr
}

// finalURL returns the URL of the request that failed, without its
// password: a redirect may carry one.
func finalURL(err error, fallback string) string {
	var ue *url.Error
	if !errors.As(err, &ue) || ue.URL == "" {
		return fallback
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return fallback
	}
	return RedactedURL(u)
}

// fetchErr describes err for [FetchResult.Err], naming timeouts as such.
// The URL of a *[url.Error] loses its userinfo: net/http names a
// redirect's Location as the server sent it, password included.
func fetchErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		c := *ue
		if u, perr := url.Parse(ue.URL); perr == nil {
			c.URL = RedactedURL(u)
		} else {
			c.URL = "(unparsable URL)"
		}
		err = &c
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout: " + err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout: " + err.Error()
	}
	return err.Error()
}

// maxAge returns the Cache-Control max-age of h; ok is false when it is
// absent or invalid.
func maxAge(h http.Header) (d time.Duration, ok bool) {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			k, val, ok := strings.Cut(d, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "max-age") {
				continue
			}
			val = strings.Trim(strings.TrimSpace(val), `"`)
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				continue
			}
			const maxSeconds = int64(1<<63-1) / int64(time.Second)
			if n > maxSeconds {
				n = maxSeconds
			}
			return time.Duration(n) * time.Second, true
		}
	}
	return 0, false
}
