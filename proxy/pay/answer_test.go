package pay

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// quote is a 402 quoting price.
func quote(price string) *http.Response {
	h := http.Header{}
	h.Set(payment.HeaderPrice, price)
	return &http.Response{StatusCode: http.StatusPaymentRequired, Header: h, Body: http.NoBody}
}

// TestAnswer: a quote within the cap is paid by one retry with its
// price, settled with what was charged; over the cap, in report mode and
// without a retry (a request that is never paid), the 402 is the
// client's, and nothing is reserved.
func TestAnswer(t *testing.T) {
	cases := []struct {
		name, price string
		mode        config.PaymentMode
		noRetry     bool
		want        string
		retries     int
		header      string
	}{
		{"paid", "USD 0.01", config.PaymentPay, false, string(answer.ReasonPaid), 1, ""},
		{"over the cap", "USD 0.03", config.PaymentPay, false, string(answer.ReasonPaymentOverCap), 0, "payment-over-cap"},
		{"report", "USD 0.01", config.PaymentReport, false, string(answer.ReasonPaymentQuoted), 0, ""},
		{"never paid", "USD 0.01", config.PaymentPay, true, string(answer.ReasonPaymentUnsupported), 0, "payment-unsupported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := payment.NewMemoryWallet(enforcetest.NewClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)), 0)
			x := &Exchange{Wallet: w, Origin: "https://shop.example",
				Terms: Terms{Mode: c.mode, Policy: payment.Policy{MaxPrice: payment.MustParseAmount("USD 0.02")}}}
			retries := 0
			if !c.noRetry {
				x.Retry = func(price payment.Amount) (*http.Response, error) {
					retries++
					h := http.Header{}
					h.Set(payment.HeaderCharged, price.String())
					return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody}, nil
				}
			}
			v := x.Answer(context.Background(), quote(c.price), nil)
			if string(v.Reason) != c.want || retries != c.retries || v.Resp.Header.Get(answer.HeaderDecision) != c.header {
				t.Fatalf("verdict %+v after %d retries, want %s after %d", v, retries, c.want, c.retries)
			}
			if v.Paid && (v.Record.Charged != "0.01" || v.Resp.StatusCode != http.StatusOK) {
				t.Errorf("paid record %+v", v.Record)
			}
		})
	}
}
