package payment

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The header fields of the pay-per-crawl wire contract, in canonical
// form.
const (
	// HeaderPrice is the price an origin quotes in a 402 ("USD 0.01").
	HeaderPrice = "Crawler-Price"
	// HeaderExactPrice is the request's agreement to pay exactly the
	// quoted price (the retry after a 402).
	HeaderExactPrice = "Crawler-Exact-Price"
	// HeaderMaxPrice is the request's standing cap: served when the
	// price is at most this.
	HeaderMaxPrice = "Crawler-Max-Price"
	// HeaderCharged is what a 200 cost.
	HeaderCharged = "Crawler-Charged"
	// HeaderError is the origin's error code ([ErrorCode]).
	HeaderError = "Crawler-Error"
)

// ErrNoHeader means that the header is absent.
var ErrNoHeader = errors.New("header absent")

// ParsePrice reads the crawler-price header of a response: the quoted
// Amount, [ErrNoHeader] when there is none, another error when it is
// repeated or malformed (such a quote is never paid).
func ParsePrice(h http.Header) (Amount, error) { return parseAmountHeader(h, HeaderPrice) }

// ParseCharged reads the crawler-charged header of a response, as
// [ParsePrice] does.
func ParseCharged(h http.Header) (Amount, error) { return parseAmountHeader(h, HeaderCharged) }

// parseAmountHeader reads the single Amount of header name in h. The
// value is trimmed of the optional white space HTTP allows around it.
func parseAmountHeader(h http.Header, name string) (Amount, error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return Amount{}, fmt.Errorf("%s: %w", name, ErrNoHeader)
	case 1:
	default:
		return Amount{}, fmt.Errorf("%s: %d values, want one", name, len(vs))
	}
	a, err := ParseAmount(strings.Trim(vs[0], " \t"))
	if err != nil {
		return Amount{}, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}

// SetExactPrice makes h carry crawler-exact-price: a and no
// crawler-max-price (an origin answers a request with both 400
// [CodeConflictingPriceHeaders]).
func SetExactPrice(h http.Header, a Amount) {
	StripPriceHeaders(h)
	h.Set(HeaderExactPrice, a.String())
}

// SetMaxPrice makes h carry crawler-max-price: a and no
// crawler-exact-price.
func SetMaxPrice(h http.Header, a Amount) {
	StripPriceHeaders(h)
	h.Set(HeaderMaxPrice, a.String())
}

// StripPriceHeaders removes the request price headers from h, whoever
// set them: a request to a free path ([isFree]) or one robotsgate does not
// pay for must not carry them.
func StripPriceHeaders(h http.Header) {
	h.Del(HeaderExactPrice)
	h.Del(HeaderMaxPrice)
}

// PriceHeaderComponent returns the name of the request price header h
// carries, lower-cased as a covered component of an HTTP Message
// Signature, and "" when it carries none: a paying request's signature
// must cover it.
func PriceHeaderComponent(h http.Header) string {
	switch {
	case len(h.Values(HeaderExactPrice)) > 0:
		return strings.ToLower(HeaderExactPrice)
	case len(h.Values(HeaderMaxPrice)) > 0:
		return strings.ToLower(HeaderMaxPrice)
	}
	return ""
}
