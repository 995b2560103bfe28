package enforce

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReadBodyByContentLength: a body of announced length is read whole
// into one buffer of its size; a Content-Length far above what is sent
// gets no buffer of that size; the limit still cuts (truncated).
func TestReadBodyByContentLength(t *testing.T) {
	body := "User-agent: *\nDisallow: /private\n"
	for _, tc := range []struct {
		name     string
		cl       int64
		max      int
		want     string
		maxCap   int
		truncate bool
	}{
		{"exact", int64(len(body)), 1 << 20, body, len(body) + 1, false},
		{"unknown", -1, 1 << 20, body, 1 << 10, false},
		{"announced 1 GB", 1 << 30, 500 << 10, body, maxHint + 1, false},
		{"over the limit", int64(len(body)), 10, body[:10], 11, true},
	} {
		resp := &http.Response{Header: http.Header{}, ContentLength: tc.cl, Body: io.NopCloser(strings.NewReader(body))}
		b, truncated, err := readBody(resp, tc.max)
		if err != nil || string(b) != tc.want || truncated != tc.truncate {
			t.Errorf("%s: %q truncated=%v %v", tc.name, b, truncated, err)
		}
		if cap(b) > tc.maxCap {
			t.Errorf("%s: buffer of %d bytes for a %d-byte body", tc.name, cap(b), len(body))
		}
	}
}
