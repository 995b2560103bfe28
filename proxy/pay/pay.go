// Package pay is the proxy's side of HTTP 402 pay-per-crawl
// (docs/payment.md): one request's payment exchange, from the price
// header sent up front to the paid retry's charge, on a
// [payment.Wallet]; what the exchange did, for the audit record (the
// ledger) and the client. The proxy's paymentStep builds an [Exchange]
// per request and gives it the retry (signing and forwarding are the
// proxy's); package pay never imports the proxy.
package pay

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// Terms are the payment settings of one request: its identity's
// (credentials file payment=, payment_max_price=) over the global ones.
type Terms struct {
	Mode   config.PaymentMode
	Policy payment.Policy
}

// TermsOf returns the terms of a request of id under cfg.
func TermsOf(cfg *config.PaymentConfig, id access.Identity) Terms {
	t := Terms{Mode: cfg.Mode, Policy: payment.Policy{MaxPrice: cfg.MaxPrice, Budgets: cfg.Budgets}}
	if id.Payment != "" {
		t.Mode = config.PaymentMode(id.Payment)
	}
	if !id.PaymentMaxPrice.IsZero() {
		t.Policy.MaxPrice = id.PaymentMaxPrice
	}
	return t
}

// Exchange is one request's payment exchange.
type Exchange struct {
	Wallet  payment.Wallet
	Metrics *metrics.Metrics
	Log     zerolog.Logger
	Terms   Terms
	// Identity is the proxy user ("" without credentials), Origin the
	// request's canonical origin.
	Identity, Origin string
	// Retry sends the request again, signed, with crawler-exact-price:
	// price, to the same address; nil when the request may not be paid
	// for (a method, a free path).
	Retry func(price payment.Amount) (*http.Response, error)
	// Backoff pauses the origin as a 503 with Retry-After retryAfter
	// does (nil: no pause).
	Backoff func(retryAfter string)
}

// Verdict is what an exchange did with the origin's answer: the answer
// for the client (the paid retry's, or the origin's, marked), and, when
// Reason is set, the audit record's reason, whether it is a payment
// ([audit.DecisionPaid]), its detail and payment fields.
type Verdict struct {
	Resp   *http.Response
	Reason enforce.Reason
	Paid   bool
	Detail string
	Record *audit.Payment
}

// Upfront is the reservation of the price a request carries up front
// (crawler-max-price): settled by the answer, or released when the
// request ends without one ([Exchange.End]).
type Upfront struct {
	res payment.Reservation

	mu   sync.Mutex
	held bool
}

// take reports whether the reservation was still held, and holds it no
// more: it is settled or released once.
func (u *Upfront) take() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	held := u.held
	u.held = false
	return held
}

// End releases the reservation if nothing settled or released it.
func (x *Exchange) End(u *Upfront) {
	if u != nil && u.take() {
		x.release(u.res)
	}
}

// Upfront reserves the price the origin quoted before, if any, within
// the caps, and sets it in h as crawler-max-price; nil when nothing is
// sent up front (no quote, or over a cap: the 402 will say why).
func (x *Exchange) Upfront(ctx context.Context, h http.Header) *Upfront {
	price, ok := x.Wallet.Quoted(ctx, x.Origin)
	if !ok {
		return nil
	}
	res, err := x.Wallet.Reserve(ctx, x.request(price))
	if err != nil {
		return nil
	}
	x.Metrics.PaymentReservation("reserved")
	payment.SetMaxPrice(h, price)
	return &Upfront{res: res, held: true}
}

// request is the payment of price the request asks for.
func (x *Exchange) request(price payment.Amount) payment.Request {
	return payment.Request{Identity: x.Identity, Origin: x.Origin, Amount: price, Policy: x.Terms.Policy}
}

// release releases the reservation res.
func (x *Exchange) release(res payment.Reservation) {
	x.Metrics.PaymentReservation("released")
	if err := x.Wallet.Release(context.Background(), res); err != nil {
		x.Log.Warn().Err(err).Str("origin", res.Request.Origin).Msg("payment: releasing a reservation failed; it expires")
	}
}

// CheckIdentities refuses users of ids who pay (payment=pay, or the
// global pay mode) without a signing key or a max price: origins charge
// only signed requests, and nothing is paid without a cap.
func CheckIdentities(cfg *config.Config, ids []access.Identity) error {
	for _, id := range ids {
		if TermsOf(&cfg.Payment, id).Mode != config.PaymentPay {
			continue
		}
		if id.SigningKey == "" && cfg.Signing.Key == "" {
			return fmt.Errorf("auth.credentials_file: user %q: payment=pay needs a signing key (signing_key= or signing.key): origins charge only signed requests", id.User)
		}
		if id.PaymentMaxPrice.IsZero() && cfg.Payment.MaxPrice.IsZero() {
			return fmt.Errorf("auth.credentials_file: user %q: payment=pay needs a max price (payment_max_price= or payment.max_price)", id.User)
		}
	}
	return nil
}

// WalletOr is w, or, when nil, a wallet of this process alone.
func WalletOr(w payment.Wallet, clock enforce.Clock) payment.Wallet {
	if w == nil {
		return payment.NewMemoryWallet(clock, 0)
	}
	return w
}

// Payable reports whether a request like r may be paid for: a GET or
// HEAD without a body, to a path that is not always free.
func Payable(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ContentLength == 0 && !payment.FreeURL(r.URL)
}

// RetryRequest is the paid retry of r, unsigned: r with its context's
// values (which hold its pin), header (a copy of the header r had before
// it was signed) and crawler-exact-price: price, without a body. As the
// first attempt, it keeps the client's User-Agent, even absent (no
// Go-http-client User-Agent). The client leaving does not cancel it: the
// origin may charge a request it received, so its answer is read and
// settled (the transport's response header timeout bounds the wait).
func RetryRequest(r *http.Request, header http.Header, price payment.Amount) *http.Request {
	out := r.WithContext(context.WithoutCancel(r.Context()))
	out.Header = header.Clone()
	out.Body, out.ContentLength = http.NoBody, 0
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""}
	}
	payment.SetExactPrice(out.Header, price)
	return out
}
