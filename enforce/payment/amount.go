// Package payment is the buyer's side of HTTP 402 pay-per-crawl: exact
// amounts of money, the price headers of the wire contract and their
// error codes, the paths that are always free, the other 402 challenges
// robotsgate recognises but never pays, and the wallet that holds the
// spending caps (budgets per fleet, identity and origin) under
// concurrency. It knows nothing of the proxy: the proxy calls it.
package payment

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Precision of an Amount: micro-units of its currency (six decimal
// places), at most [MaxUnits]. Sums of a few amounts stay below 2^53, so
// Redis's Lua scripts (whose numbers are doubles) add them exactly.
const (
	UnitsPerWhole = 1_000_000           // micro-units in one unit of a currency
	fracDigits    = 6                   // decimal places kept
	MaxUnits      = 999_999_999_999_999 // 999999999.999999: the largest amount
	maxWireLen    = 64                  // longer wire forms are refused unread
)

// ErrCurrencyMismatch is returned when two amounts of different
// currencies are compared or added: currencies are never converted.
var ErrCurrencyMismatch = errors.New("amounts in different currencies")

// Amount is an exact sum of money: a currency (three upper-case ASCII
// letters, ISO 4217 style, e.g. USD) and a non-negative number of
// micro-units of it. The zero Amount (no currency) is "none".
type Amount struct {
	Currency string
	Units    int64 // micro-units (see [UnitsPerWhole])
}

// IsZero reports whether a is the zero Amount (no currency).
func (a Amount) IsZero() bool { return a.Currency == "" }

// ParseAmount parses the wire form "USD 0.01": a currency of three
// upper-case ASCII letters, one space, and a decimal number of ASCII
// digits with an optional fraction ("5", "0.01", "007.50"). It refuses
// signs, exponents, a leading or trailing dot, other white space, more
// than six decimal places that are not zero, and values above
// [MaxUnits] micro-units. The error quotes at most the first bytes of s.
func ParseAmount(s string) (Amount, error) {
	if len(s) > maxWireLen {
		return Amount{}, fmt.Errorf("amount of %d bytes: longer than %d", len(s), maxWireLen)
	}
	cur, num, ok := strings.Cut(s, " ")
	if !ok {
		return Amount{}, fmt.Errorf("amount %q: want CURRENCY AMOUNT, e.g. USD 0.01", s)
	}
	if !validCurrency(cur) {
		return Amount{}, fmt.Errorf("amount %q: currency is not three upper-case letters", s)
	}
	units, err := parseUnits(num)
	if err != nil {
		return Amount{}, fmt.Errorf("amount %q: %w", s, err)
	}
	return Amount{Currency: cur, Units: units}, nil
}

// MustParseAmount is [ParseAmount] for constants known to be valid; it
// panics on an error.
func MustParseAmount(s string) Amount {
	a, err := ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

// validCurrency reports whether c is three upper-case ASCII letters.
func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := range 3 {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

// parseUnits parses "digits[.digits]" into micro-units.
func parseUnits(num string) (int64, error) {
	whole, frac, hasDot := strings.Cut(num, ".")
	if whole == "" || (hasDot && frac == "") || !digits(whole) || !digits(frac) {
		return 0, errors.New("not a decimal number of digits with an optional fraction")
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 9 {
		return 0, errors.New("above the largest amount (999999999.999999)")
	}
	if len(frac) > fracDigits {
		if strings.Trim(frac[fracDigits:], "0") != "" {
			return 0, fmt.Errorf("more than %d decimal places", fracDigits)
		}
		frac = frac[:fracDigits]
	}
	frac += strings.Repeat("0", fracDigits-len(frac))
	w, _ := strconv.ParseInt("0"+whole, 10, 64) // at most 9 digits
	f, _ := strconv.ParseInt(frac, 10, 64)      // exactly 6 digits
	return w*UnitsPerWhole + f, nil
}

// digits reports whether s holds only ASCII digits ("" does).
func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String returns the wire form ("USD 0.01", "USD 5"): no trailing zeros
// in the fraction, no fraction when it is zero. The zero Amount is "".
func (a Amount) String() string {
	if a.IsZero() {
		return ""
	}
	return a.Currency + " " + a.Decimal()
}

// Decimal returns the number of a without its currency ("0.01").
func (a Amount) Decimal() string {
	u := a.Units
	sign := ""
	if u < 0 { // never from ParseAmount; formatted rather than hidden
		sign, u = "-", -u
	}
	s := sign + strconv.FormatInt(u/UnitsPerWhole, 10)
	if f := u % UnitsPerWhole; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", f), "0")
	}
	return s
}

// Cmp compares a and b: -1, 0 or +1. Amounts of different currencies
// are not comparable: the error is [ErrCurrencyMismatch].
func (a Amount) Cmp(b Amount) (int, error) {
	if a.Currency != b.Currency {
		return 0, fmt.Errorf("%s against %s: %w", a.Currency, b.Currency, ErrCurrencyMismatch)
	}
	switch {
	case a.Units < b.Units:
		return -1, nil
	case a.Units > b.Units:
		return 1, nil
	}
	return 0, nil
}

// Add returns a+b, both of one currency.
func (a Amount) Add(b Amount) (Amount, error) {
	if a.Currency != b.Currency {
		return Amount{}, fmt.Errorf("%s plus %s: %w", a.Currency, b.Currency, ErrCurrencyMismatch)
	}
	return Amount{Currency: a.Currency, Units: a.Units + b.Units}, nil
}
