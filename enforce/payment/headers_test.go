package payment

import (
	"encoding/base64"
	"errors"
	"net/http"
	"testing"
)

func TestParsePrice(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   string // "" = error
		absent bool
	}{
		{"plain", []string{"USD 0.01"}, "USD 0.01", false},
		{"optional white space", []string{" \tUSD 0.01\t "}, "USD 0.01", false},
		{"absent", nil, "", true},
		{"repeated", []string{"USD 0.01", "USD 0.02"}, "", false},
		{"malformed", []string{"USD -1"}, "", false},
		{"empty", []string{""}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.values {
				h.Add("crawler-price", v)
			}
			a, err := ParsePrice(h)
			switch {
			case c.absent && !errors.Is(err, ErrNoHeader):
				t.Fatalf("got %v %v, want ErrNoHeader", a, err)
			case c.want == "" && err == nil:
				t.Fatalf("got %v, want an error", a)
			case c.want != "" && (err != nil || a.String() != c.want):
				t.Fatalf("got %v %v, want %s", a, err, c.want)
			}
		})
	}
}

func TestSetPriceHeadersAtMostOne(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderMaxPrice, "USD 9")
	SetExactPrice(h, MustParseAmount("USD 0.01"))
	if h.Get(HeaderMaxPrice) != "" || h.Get(HeaderExactPrice) != "USD 0.01" || PriceHeaderComponent(h) != "crawler-exact-price" {
		t.Fatalf("after SetExactPrice: %v", h)
	}
	SetMaxPrice(h, MustParseAmount("USD 0.02"))
	if h.Get(HeaderExactPrice) != "" || h.Get(HeaderMaxPrice) != "USD 0.02" || PriceHeaderComponent(h) != "crawler-max-price" {
		t.Fatalf("after SetMaxPrice: %v", h)
	}
	StripPriceHeaders(h)
	if PriceHeaderComponent(h) != "" {
		t.Fatalf("after Strip: %v", h)
	}
}

func TestParseError(t *testing.T) {
	cases := []struct {
		name, value string
		want        Action
	}{
		{"forbidden", "CrawlerForbidden", ActionStop},
		{"payment failed", "PaymentFailed", ActionStop},
		{"strong auth", "StrongAuthRequired", ActionFix},
		{"bad signature", "InvalidSignature", ActionFix},
		{"bad price value", "InvalidCrawlerPriceValue", ActionFix},
		{"conflicting", "ConflictingPriceHeaders", ActionFix},
		{"missing price", "MissingCrawlerPrice", ActionRequote},
		{"bad exact", "InvalidCrawlerExactPrice", ActionRequote},
		{"bad max", "InvalidCrawlerMaxPrice", ActionRequote},
		{"content price", "InvalidContentPrice", ActionFix},
		{"internal", " InternalError ", ActionBackoff},
		{"unknown", "Whatever", ActionNone},
		{"wrong case", "internalerror", ActionNone},
		{"none", "", ActionNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.value != "" {
				h.Set(HeaderError, c.value)
			}
			if _, got := ParseError(h); got != c.want {
				t.Fatalf("ParseError(%q) = %v, want %v", c.value, got, c.want)
			}
		})
	}
	if len(Codes()) != 11 {
		t.Fatalf("the contract has 11 codes, the table %d", len(Codes()))
	}
}

func TestIsFree(t *testing.T) {
	cases := []struct {
		name, target string
		want         bool
	}{
		{"robots", "/robots.txt", true},
		{"sitemap", "/sitemap.xml", true},
		{"security", "/security.txt", true},
		{"well-known security", "/.well-known/security.txt", true},
		{"crawlers", "/crawlers.json", true},
		{"query", "/robots.txt?x=1", true},
		{"fragment", "/sitemap.xml#top", true},
		{"upper case", "/ROBOTS.TXT", true},
		{"percent-encoded", "/robots%2Etxt", true},
		{"encoded slash", "/.well-known%2fsecurity.txt", true},
		{"double slash", "//robots.txt", true},
		{"dot segments", "/a/../robots.txt", true},
		{"absolute URL", "https://example.com/robots.txt?q", true},
		{"page", "/index.html", false},
		{"nested robots", "/docs/robots.txt", false},
		{"prefix", "/robots.txt.bak", false},
		{"absolute page", "https://example.com/page", false},
		{"root", "/", false},
		{"bad escape", "/robots.txt%zz", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := isFree(c.target); got != c.want {
				t.Fatalf("isFree(%q) = %v, want %v", c.target, got, c.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	x402 := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"exact","network":"base","amount":"10000","asset":"0xUSDC"}]}`))
	x402v1 := base64.RawURLEncoding.EncodeToString([]byte(`{"x402Version":1,"accepts":[{"maxAmountRequired":"500"}]}`))
	cases := []struct {
		name          string
		hdr           map[string]string
		kind          ChallengeKind
		scheme, quote string
	}{
		{"price", map[string]string{"crawler-price": "USD 0.01"}, ChallengePrice, "", ""},
		{"bad price", map[string]string{"crawler-price": "USD 1e3"}, ChallengeBadPrice, "", ""},
		{"price wins", map[string]string{"crawler-price": "USD 0.01", "Payment-Required": x402}, ChallengePrice, "", ""},
		{"x402", map[string]string{"PAYMENT-REQUIRED": x402}, ChallengeUnsupported, SchemeX402, "10000 asset=0xUSDC network=base"},
		{"x402 v1 raw url", map[string]string{"PAYMENT-REQUIRED": x402v1}, ChallengeUnsupported, SchemeX402, "500"},
		{"x402 garbage", map[string]string{"PAYMENT-REQUIRED": "%%%"}, ChallengeUnsupported, SchemeX402, ""},
		{"payment", map[string]string{"WWW-Authenticate": `Payment realm="x", amount="0.05 USD"`}, ChallengeUnsupported, SchemePayment, "0.05 USD"},
		{"payment after basic", map[string]string{"WWW-Authenticate": `Basic realm="a, b", payment id=1`}, ChallengeUnsupported, SchemePayment, ""},
		{"license", map[string]string{"WWW-Authenticate": `License error="invalid_request"`}, ChallengeUnsupported, SchemeLicense, ""},
		{"basic only", map[string]string{"WWW-Authenticate": `Basic realm="x"`}, ChallengeNone, "", ""},
		{"nothing", nil, ChallengeNone, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.hdr {
				h.Set(k, v)
			}
			got := Classify(h)
			if got.Kind != c.kind || got.Scheme != c.scheme || got.Quote != c.quote {
				t.Fatalf("Classify = %+v, want kind %d scheme %q quote %q", got, c.kind, c.scheme, c.quote)
			}
		})
	}
}
