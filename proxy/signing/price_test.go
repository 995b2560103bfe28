package signing

import (
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// TestSignCoversPriceHeader: a request carrying a pay-per-crawl price
// header has it covered, after the configured components; one without
// covers none.
func TestSignCoversPriceHeader(t *testing.T) {
	cases := []struct {
		name, header, want string
	}{
		{"exact price", payment.HeaderExactPrice, `"@path" "crawler-exact-price");`},
		{"max price", payment.HeaderMaxPrice, `"@path" "crawler-max-price");`},
		{"none", "", `"@path");`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSigner(t, Options{Components: []string{"@path"}})
			r, _ := http.NewRequest(http.MethodGet, "https://shop.example/p", nil)
			if c.header != "" {
				r.Header.Set(c.header, "USD 0.01")
			}
			if _, err := s.Sign(r); err != nil {
				t.Fatal(err)
			}
			if in := r.Header.Get("Signature-Input"); !strings.Contains(in, c.want) {
				t.Errorf("Signature-Input %s, want %s", in, c.want)
			}
		})
	}
}
