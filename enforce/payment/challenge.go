package payment

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// ChallengeKind is what a 402 asks for.
type ChallengeKind int

// Kinds of 402 challenges.
const (
	// ChallengeNone: no payment challenge robotsgate recognises.
	ChallengeNone ChallengeKind = iota
	// ChallengePrice: a crawler-price quote robotsgate may pay.
	ChallengePrice
	// ChallengeBadPrice: a crawler-price header that does not parse (or
	// is repeated); never paid.
	ChallengeBadPrice
	// ChallengeUnsupported: another scheme (x402, WWW-Authenticate:
	// Payment or License); never paid, passed through and audited as
	// payment-unsupported.
	ChallengeUnsupported
)

// Schemes of unsupported challenges, as audited.
const (
	SchemeX402    = "x402"
	SchemePayment = "Payment"
	SchemeLicense = "License"
)

// Challenge is a classified 402.
type Challenge struct {
	Kind ChallengeKind
	// Price is the crawler-price quote ([ChallengePrice]).
	Price Amount
	// Err says why a crawler-price did not parse ([ChallengeBadPrice]).
	Err error
	// Scheme is the scheme of an unsupported challenge ([SchemeX402],
	// [SchemePayment] or [SchemeLicense]); Quote its amount as the origin
	// wrote it, where readable ("" when not), cut to a bounded length.
	Scheme, Quote string
}

// [maxQuoteLen] bounds the quoted amount an audit record carries;
// [maxX402Header] bounds the PAYMENT-REQUIRED header decoded.
const (
	maxQuoteLen   = 128
	maxX402Header = 16 << 10
)

// Classify tells what the 402 response headers h ask for. A
// crawler-price header wins (parsed or not); then an x402
// PAYMENT-REQUIRED header; then a WWW-Authenticate challenge of scheme
// Payment or License.
func Classify(h http.Header) Challenge {
	if len(h.Values(HeaderPrice)) > 0 {
		p, err := ParsePrice(h)
		if err != nil {
			return Challenge{Kind: ChallengeBadPrice, Err: err}
		}
		return Challenge{Kind: ChallengePrice, Price: p}
	}
	if v := h.Get("Payment-Required"); v != "" {
		return Challenge{Kind: ChallengeUnsupported, Scheme: SchemeX402, Quote: bound(x402Quote(v))}
	}
	for _, v := range h.Values("Www-Authenticate") {
		for _, ch := range splitChallenges(v) {
			scheme, params, _ := strings.Cut(strings.TrimLeft(ch, " \t"), " ")
			switch {
			case strings.EqualFold(scheme, SchemePayment):
				return Challenge{Kind: ChallengeUnsupported, Scheme: SchemePayment, Quote: bound(authQuote(params))}
			case strings.EqualFold(scheme, SchemeLicense):
				return Challenge{Kind: ChallengeUnsupported, Scheme: SchemeLicense, Quote: bound(authQuote(params))}
			}
		}
	}
	return Challenge{}
}

// bound cuts s to [maxQuoteLen] bytes and drops control characters.
func bound(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > maxQuoteLen {
		s = s[:maxQuoteLen]
	}
	return strings.ToValidUTF8(s, "")
}

// x402Quote reads the amount of an x402 PAYMENT-REQUIRED header (base64
// of a JSON quote): the first accepted payment's amount
// ("maxAmountRequired" in version 1, "amount" in version 2) with its
// asset and network, e.g. "10000 asset=0x… network=base". "" when the
// header is not readable.
func x402Quote(v string) string {
	if len(v) > maxX402Header {
		return ""
	}
	raw, err := decodeBase64(strings.TrimSpace(v))
	if err != nil {
		return ""
	}
	var q struct {
		Accepts []struct {
			Amount            json.Number `json:"amount"`
			MaxAmountRequired json.Number `json:"maxAmountRequired"`
			Asset             string      `json:"asset"`
			Network           string      `json:"network"`
		} `json:"accepts"`
	}
	if json.Unmarshal(raw, &q) != nil || len(q.Accepts) == 0 {
		return ""
	}
	a := q.Accepts[0]
	amt := string(a.Amount)
	if amt == "" {
		amt = string(a.MaxAmountRequired)
	}
	if amt == "" {
		return ""
	}
	s := amt
	if a.Asset != "" {
		s += " asset=" + a.Asset
	}
	if a.Network != "" {
		s += " network=" + a.Network
	}
	return s
}

// decodeBase64 decodes standard or URL-safe base64, padded or not.
func decodeBase64(v string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// splitChallenges splits a WWW-Authenticate value into its challenges,
// roughly: at commas outside quotes that are followed by a token and a
// space (a new scheme) rather than by a parameter ("name=").
func splitChallenges(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == ',' && !quoted && startsScheme(v[i+1:]):
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// startsScheme reports whether s (after a comma) begins a new challenge:
// a token followed by a space or the end, not by "=".
func startsScheme(s string) bool {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " =,")
	return i != 0 && (i < 0 || s[i] != '=')
}

// authQuote returns the value of the "amount" or "price" parameter of a
// challenge's parameters, "" when it has neither.
func authQuote(params string) string {
	for _, p := range splitParams(params) {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "amount" || k == "price" {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
			}
			return v
		}
	}
	return ""
}

// splitParams splits auth-params at commas outside quotes.
func splitParams(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
