package enforce

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestFetchErrorKinds(t *testing.T) {
	tlsSrv := quietTLSServer(serve(200, "User-agent: *\n")) // its certificate is not trusted here
	t.Cleanup(tlsSrv.Close)
	stall := newOrigin(t, blocking(t))
	unknownCoding := newOrigin(t, serveBytes([]byte("x"), "br"))
	tests := []struct {
		name   string
		origin string
		f      *HTTPFetcher
		want   FetchErrorKind
	}{
		{"refused", refusedOrigin(t), &HTTPFetcher{MaxRedirects: testRedirects}, FetchRefused},
		{"untrusted certificate", tlsSrv.URL, &HTTPFetcher{MaxRedirects: testRedirects}, FetchTLSUntrusted},
		{"timeout", stall.srv.URL, &HTTPFetcher{MaxRedirects: testRedirects, Timeout: 50 * time.Millisecond}, FetchTimeout},
		{"unknown coding", unknownCoding.srv.URL, &HTTPFetcher{MaxRedirects: testRedirects}, FetchDecode},
		{"status", newOrigin(t, serve(503, "")).srv.URL, &HTTPFetcher{MaxRedirects: testRedirects}, FetchStatus},
		{"ok", newOrigin(t, serve(200, "User-agent: *\n")).srv.URL, &HTTPFetcher{MaxRedirects: testRedirects}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.f.Fetch(context.Background(), tt.origin)
			if r.ErrKind != tt.want {
				t.Fatalf("ErrKind = %q (%s), want %q", r.ErrKind, r.Err, tt.want)
			}
			var fe *FetchError
			if got := errors.As(r.Error(), &fe); got != (tt.want != "") || got && (fe.Kind != tt.want || fe.Error() != r.Err) {
				t.Fatalf("errors.As(%v) = %v, %+v", r.Error(), got, fe)
			}
		})
	}
}

// quietTLSServer is httptest.NewTLSServer whose TLS handshake errors (the
// clients of these tests refuse its certificate on purpose) are not
// printed.
func quietTLSServer(h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = quietLog()
	s.StartTLS()
	return s
}

// quietLog is a logger that discards what it is given.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
