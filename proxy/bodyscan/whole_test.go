package bodyscan

import (
	"net/http"
	"testing"
)

func TestNarrowAcceptEncoding(t *testing.T) {
	for in, want := range map[string]string{
		"gzip":                          "gzip",
		"br, gzip;q=0.8, zstd, deflate": "gzip;q=0.8, deflate",
		"br":                            "identity",
		"*":                             "identity",
		"":                              "",
		"GZIP, X-Gzip , identity;q=0.1": "GZIP, X-Gzip , identity;q=0.1",
	} {
		h := http.Header{"Accept-Encoding": {in}}
		narrowAcceptEncoding(h)
		if got := h.Get("Accept-Encoding"); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	h := http.Header{}
	narrowAcceptEncoding(h)
	if _, ok := h["Accept-Encoding"]; ok {
		t.Error("Accept-Encoding added")
	}
}
