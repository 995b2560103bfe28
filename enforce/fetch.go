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
)

// Defaults of HTTPFetcher's zero fields.
const (
	DefaultUserAgent    = "robotsgate/1.0 (+https://github.com/robotsgate/robotsgate)"
	DefaultMaxBytes     = robots.DefaultMaxBytes // 500 KiB
	DefaultMaxRedirects = 5
	DefaultFetchTimeout = 10 * time.Second
)

// HTTPFetcher is the Fetcher that GETs origin + "/robots.txt" over HTTP
// and classifies the result as RFC 9309 §2.3.1 does:
//
//   - 2xx: StatusOK; the body is read up to MaxBytes, the rest is ignored
//     (Truncated is set) and never read.
//   - 3xx: redirects are followed, also across hosts, up to MaxRedirects;
//     one more makes the result StatusUnavailable. A 3xx that cannot be
//     followed (no Location) is StatusUnavailable too.
//   - 4xx other than 429, including 401 and 403: StatusUnavailable.
//   - 429, 5xx, other statuses, timeouts, DNS and connection errors, and
//     errors while reading a 2xx body: StatusUnreachable.
//
// The fields must not be changed once Fetch has been called. An
// HTTPFetcher is safe for concurrent use.
type HTTPFetcher struct {
	// Transport sends the requests; robotsgate passes the transport of
	// proxied traffic. nil means a private clone of
	// http.DefaultTransport that uses no proxy (HTTP_PROXY and friends
	// in the environment are ignored).
	Transport http.RoundTripper
	// UserAgent is the User-Agent header of the fetches; default
	// DefaultUserAgent.
	UserAgent string
	// MaxBytes is how much of a body is read; default DefaultMaxBytes.
	MaxBytes int
	// MaxRedirects is how many redirects are followed; default
	// DefaultMaxRedirects. A negative value follows none.
	MaxRedirects int
	// Timeout bounds one fetch, redirects and body included; default
	// DefaultFetchTimeout. The ctx passed to Fetch bounds it too.
	Timeout time.Duration

	once sync.Once
	tr   http.RoundTripper
}

// Fetch fetches origin's robots.txt ("scheme://host[:port]", as returned
// by Origin). It never returns an empty Status.
func (f *HTTPFetcher) Fetch(ctx context.Context, origin string) FetchResult {
	maxBytes := f.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	maxRedirects := f.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	} else if maxRedirects < 0 {
		maxRedirects = 0
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ua := f.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}

	target := origin + "/robots.txt"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		// A malformed origin cannot be fetched now or later.
		return FetchResult{Status: StatusUnreachable, FinalURL: target, Err: fmt.Sprintf("bad robots.txt URL: %v", err)}
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/plain, */*;q=0.1")

	tooMany := false
	client := &http.Client{
		Transport: f.transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
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
		return FetchResult{Status: StatusUnreachable, FinalURL: RedactURLsIn(finalURL(err, target)), Err: RedactURLsIn(fetchErr(err))}
	}
	defer resp.Body.Close()

	r := FetchResult{HTTPStatus: resp.StatusCode, FinalURL: RedactedURL(resp.Request.URL)} // a redirect may carry credentials
	r.MaxAge, r.HasMaxAge = maxAge(resp.Header)
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxBytes)+1))
		if err != nil {
			return FetchResult{Status: StatusUnreachable, HTTPStatus: code, FinalURL: r.FinalURL,
				Err: "reading robots.txt body: " + RedactURLsIn(fetchErr(err))}
		}
		if len(body) > maxBytes {
			body = body[:maxBytes:maxBytes]
			r.Truncated = true
		}
		r.Status, r.Body = StatusOK, body
		return r
	case code >= 300 && code <= 399:
		r.Status = StatusUnavailable
		if tooMany {
			r.Err = fmt.Sprintf("too many redirects (more than %d)", maxRedirects)
		} else {
			r.Err = fmt.Sprintf("HTTP %d redirect that cannot be followed", code)
		}
	case code == http.StatusTooManyRequests:
		r.Status = StatusUnreachable
		r.Err = "HTTP 429 Too Many Requests"
	case code >= 400 && code <= 499:
		r.Status = StatusUnavailable
		r.Err = "HTTP " + resp.Status
	default:
		r.Status = StatusUnreachable
		r.Err = "HTTP " + resp.Status
	}
	// Let the connection be reused if little is left to read.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	return r
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

// finalURL returns the URL of the request that failed.
func finalURL(err error, fallback string) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		return ue.URL
	}
	return fallback
}

// fetchErr describes err for FetchResult.Err, naming timeouts as such.
func fetchErr(err error) string {
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
