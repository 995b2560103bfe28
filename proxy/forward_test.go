package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
)

// A body of known length is forwarded with its Content-Length, and what
// the origin has sent reaches the client before the origin sends the rest
// (copyBody flushes pieces that do not end the body).
func TestKnownLengthBodyStreamed(t *testing.T) {
	checkStreamed(t, "/known", "13", func(resp *http.Response) {
		if resp.ContentLength != 13 || len(resp.TransferEncoding) != 0 {
			t.Fatalf("ContentLength %d, TransferEncoding %q; want 13 and none", resp.ContentLength, resp.TransferEncoding)
		}
	})
}

// readFromRecorder is a ResponseWriter that counts the calls of its
// ReadFrom (net/http's response has one, which io.Copy prefers).
type readFromRecorder struct {
	*httptest.ResponseRecorder
	readFroms int
}

func (r *readFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.readFroms++
	return io.Copy(r.ResponseRecorder, src)
}

// Forwarded bodies are written through the ResponseWriter's Write (so
// that the header and a small body leave in one write), never handed to
// its ReadFrom, which flushes the header on its own and allocates a copy
// buffer per response; large bodies arrive whole, with their length.
func TestForwardedBodyWritten(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB, several copy buffers
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, "small page")
	})
	srv, err := buildServer(t, testConfig(t), enforce.Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, body string }{{"/small", "small page"}, {"/big", big}} {
		r := httptest.NewRequest(http.MethodGet, o.URL+tc.path, nil)
		r.Header.Set("User-Agent", "TestBot/1.0")
		w := &readFromRecorder{ResponseRecorder: httptest.NewRecorder()}
		srv.ServeHTTP(w, r)
		if w.Code != http.StatusOK || w.Body.String() != tc.body || w.readFroms != 0 {
			t.Errorf("%s: status %d, %d bytes (want %d), ReadFrom called %d times (want 0)",
				tc.path, w.Code, w.Body.Len(), len(tc.body), w.readFroms)
		}
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(len(tc.body)) {
			t.Errorf("%s: Content-Length %q, want %d", tc.path, cl, len(tc.body))
		}
	}
}
