package payment

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	ok := []struct{ name, in, want string }{
		{"cent", "USD 0.01", "USD 0.01"},
		{"whole", "USD 5", "USD 5"},
		{"trailing zeros", "EUR 1.50", "EUR 1.5"},
		{"leading zeros", "USD 007.000", "USD 7"},
		{"micro", "USD 0.000001", "USD 0.000001"},
		{"zero", "USD 0", "USD 0"},
		{"zeros beyond precision", "USD 0.0100000000", "USD 0.01"},
		{"largest", "USD 999999999.999999", "USD 999999999.999999"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseAmount(c.in)
			if err != nil || a.String() != c.want {
				t.Fatalf("ParseAmount(%q) = %v, %v; want %s", c.in, a, err, c.want)
			}
		})
	}
	bad := []struct{ name, in string }{
		{"empty", ""}, {"no amount", "USD"}, {"no currency", "0.01"}, {"lower case", "usd 0.01"},
		{"two letters", "US 0.01"}, {"four letters", "USDT 0.01"}, {"negative", "USD -0.01"},
		{"plus", "USD +1"}, {"exponent", "USD 1e3"}, {"two spaces", "USD  0.01"}, {"tab", "USD\t0.01"},
		{"leading space", " USD 0.01"}, {"trailing space", "USD 0.01 "}, {"leading dot", "USD .5"},
		{"trailing dot", "USD 5."}, {"two dots", "USD 1.2.3"}, {"comma", "USD 0,01"}, {"underscore", "USD 1_000"},
		{"hex", "USD 0x10"}, {"too precise", "USD 0.0000001"}, {"overflow", "USD 1000000000"},
		{"huge", "USD 99999999999999999999999"}, {"unicode digit", "USD ٣"}, {"nbsp", "USD\u00a00.01"},
		{"garbage", "USD 0.01; drop"}, {"too long", "USD 0." + strings.Repeat("0", 80)}, {"nan", "USD NaN"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			if a, err := ParseAmount(c.in); err == nil {
				t.Fatalf("ParseAmount(%q) = %v, want an error", c.in, a)
			}
		})
	}
}

func TestAmountCmp(t *testing.T) {
	a, b := MustParseAmount("USD 0.01"), MustParseAmount("USD 0.02")
	if c, err := a.Cmp(b); err != nil || c != -1 {
		t.Fatalf("0.01 vs 0.02: %d %v", c, err)
	}
	if c, err := b.Cmp(a); err != nil || c != 1 {
		t.Fatalf("0.02 vs 0.01: %d %v", c, err)
	}
	if c, err := a.Cmp(a); err != nil || c != 0 {
		t.Fatalf("0.01 vs 0.01: %d %v", c, err)
	}
	if _, err := a.Cmp(MustParseAmount("EUR 0.01")); !errors.Is(err, ErrCurrencyMismatch) {
		t.Fatalf("USD vs EUR: %v, want ErrCurrencyMismatch", err)
	}
	if _, err := a.Add(MustParseAmount("EUR 0.01")); !errors.Is(err, ErrCurrencyMismatch) {
		t.Fatalf("USD + EUR: %v, want ErrCurrencyMismatch", err)
	}
	if s, err := a.Add(b); err != nil || s != MustParseAmount("USD 0.03") {
		t.Fatalf("0.01 + 0.02 = %v %v", s, err)
	}
}

// wireForm is the grammar ParseAmount accepts, before its limits.
var wireForm = regexp.MustCompile(`^[A-Z]{3} [0-9]+(\.[0-9]+)?$`)

// FuzzParseAmount: whatever the input, ParseAmount never panics; what it
// accepts follows the grammar, is exactly the decimal written (checked
// with math/big), lies within the limits and survives a round trip.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"USD 0.01", "USD 5", "EUR 0.0000001", "USD -1", "USD 1e3", "usd 1", "USD 999999999.999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAmount(s)
		if err != nil {
			return
		}
		if !wireForm.MatchString(s) {
			t.Fatalf("accepted %q outside the grammar", s)
		}
		if a.Units < 0 || a.Units > MaxUnits {
			t.Fatalf("%q: units %d out of range", s, a.Units)
		}
		want, ok := new(big.Rat).SetString(strings.SplitN(s, " ", 2)[1])
		got := new(big.Rat).SetFrac64(a.Units, UnitsPerWhole)
		if !ok || want.Cmp(got) != 0 {
			t.Fatalf("%q parsed as %d micro-units", s, a.Units)
		}
		b, err := ParseAmount(a.String())
		if err != nil || b != a {
			t.Fatalf("%q: round trip %q gave %v, %v", s, a.String(), b, err)
		}
	})
}
