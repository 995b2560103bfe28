package payment

import (
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzClassify: no challenge header, however malformed, panics, and the
// quote an audit record would carry is bounded valid UTF-8 without
// control characters.
func FuzzClassify(f *testing.F) {
	f.Add("", "eyJhY2NlcHRzIjpbeyJhbW91bnQiOiIxIn1dfQ==", `Payment amount="1", License x`)
	f.Add("USD 0.01", "", "")
	f.Add("USD 1e3", "%%", `Basic realm="a,b", payment amount="\"`)
	f.Fuzz(func(t *testing.T, price, x402, auth string) {
		h := http.Header{}
		for k, v := range map[string]string{HeaderPrice: price, "Payment-Required": x402, "Www-Authenticate": auth} {
			if v != "" {
				h.Set(k, v)
			}
		}
		c := Classify(h)
		if len(c.Quote) > maxQuoteLen || !utf8.ValidString(c.Quote) {
			t.Fatalf("quote %q", c.Quote)
		}
		for _, r := range c.Quote {
			if r < ' ' || r == 0x7f {
				t.Fatalf("control character in quote %q", c.Quote)
			}
		}
		if c.Kind == ChallengePrice && (c.Price.Units < 0 || c.Price.Units > MaxUnits) {
			t.Fatalf("price %v out of range", c.Price)
		}
	})
}

// FuzzIsFree: isFree never panics, and a free path stays free with a
// query appended.
func FuzzIsFree(f *testing.F) {
	for _, s := range []string{"/robots.txt", "/%2e%2E/sitemap.xml", "https://a/b", "", "%", "/.well-known%2fsecurity.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isFree(s) && !isFree(s+"?q=1") {
			t.Fatalf("%q is free, with a query it is not", s)
		}
	})
}
