package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
)

// paymentStep is HTTP 402 pay-per-crawl (docs/payment.md), the step
// around package payment. On the request side (after every step that may
// refuse the request, before it is signed) it removes the price headers
// a client set, keeps the request's header for a paid retry, and, for an
// origin that quoted before, reserves the quoted price and sends it up
// front as crawler-max-price. On the response side (paymentretry.go) it
// pays a 402's quote within the caps by retrying the request once,
// signed, with crawler-exact-price, or passes the 402 through and says
// why; it audits every exchange (the ledger).
type paymentStep struct {
	s      *Server
	wallet payment.Wallet
	cfg    config.PaymentConfig
	polite *politeness.Politeness // [payment.CodeInternalError] pauses the origin as a 503 does
}

// newPaymentStep is the payment step of cfg, on the Server's wallet.
func newPaymentStep(cfg *config.Config, s *Server, pol *politeness.Politeness) *paymentStep {
	return &paymentStep{s: s, wallet: s.wallet, cfg: cfg.Payment, polite: pol}
}

// walletOr is w, or, when nil, a wallet of this process alone.
func walletOr(w payment.Wallet, clock enforce.Clock) payment.Wallet {
	if w == nil {
		return payment.NewMemoryWallet(clock, 0)
	}
	return w
}

// payTerms are the payment settings of one request: its identity's
// (credentials file payment=, payment_max_price=) over the global ones.
type payTerms struct {
	mode   config.PaymentMode
	policy payment.Policy
}

func (p *paymentStep) terms(st *requestState) payTerms {
	id := st.identity()
	t := payTerms{mode: p.cfg.Mode, policy: payment.Policy{MaxPrice: p.cfg.MaxPrice, Budgets: p.cfg.Budgets}}
	if id.Payment != "" {
		t.mode = config.PaymentMode(id.Payment)
	}
	if !id.PaymentMaxPrice.IsZero() {
		t.policy.MaxPrice = id.PaymentMaxPrice
	}
	return t
}

// payState is the payment state of a request that may be paid for
// ([payOf]): its header as it was before it was
// signed (the paid retry is signed afresh), and the reservation of the
// price it carries up front. The paid retry's reservation is the
// response step's own ([paymentStep.pay]), ended before it returns.
type payState struct {
	header  http.Header
	upfront *payment.Reservation // of crawler-max-price, nil when the request carries none

	mu   sync.Mutex
	held bool // upfront is neither settled nor released yet
}

// mayPay reports whether the request of st may be under pay or report
// mode, without allocating: payment.mode is not off, or its user's
// payment= is set (read without identify, which allocates).
func (p *paymentStep) mayPay(r *http.Request, st *requestState) bool {
	if p.cfg.Mode != config.PaymentOff {
		return true
	}
	if st.Identity != nil {
		return st.Identity.Payment != ""
	}
	if id, ok := access.IdentityFrom(r.Context()); ok {
		return id.Payment != ""
	}
	return st.Session != nil && st.Session.Identity != nil && st.Session.Identity.Payment != ""
}

// payKey is the context key of a request's *[payState].
type payKey struct{}

// payOf returns the payment state of the request of st, nil when pay
// mode may not pay for it.
func payOf(st *requestState) *payState {
	if st.Req == nil {
		return nil
	}
	ps, _ := st.Req.Context().Value(payKey{}).(*payState)
	return ps
}

// take reports whether the up-front reservation was still held, and
// holds it no more: it is settled or released once.
func (ps *payState) take() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	held := ps.held
	ps.held = false
	return held
}

// onRequest prepares a request of pay mode: see [paymentStep].
func (p *paymentStep) onRequest(r *http.Request, st *requestState) outcome {
	if st.Answered || !p.mayPay(r, st) {
		return outcome{}
	}
	identify(r, st)
	t := p.terms(st)
	if t.mode != config.PaymentPay {
		return outcome{}
	}
	payment.StripPriceHeaders(r.Header) // robotsgate is the wallet: a client's own price header would go past it
	if !payable(r, st) {
		return outcome{}
	}
	ps := &payState{header: r.Header.Clone()}
	// The state rides in the request's context: the request state stays
	// in its allocation size class, and only a request pay mode may pay
	// for carries it.
	r = r.WithContext(context.WithValue(r.Context(), payKey{}, ps))
	st.Req = r
	price, ok := p.wallet.Quoted(r.Context(), st.Decision.Origin)
	if !ok {
		return outcome{}
	}
	res, err := p.wallet.Reserve(r.Context(), p.request(st, t, price))
	if err != nil { // over a cap: sent without a price, the 402 says what it costs, and why it is not paid
		return outcome{}
	}
	p.s.metrics.PaymentReservation("reserved")
	ps.upfront, ps.held = &res, true
	payment.SetMaxPrice(r.Header, price)
	// Whatever ends the request without its response step (a failed
	// forward, a client gone) releases the reservation.
	context.AfterFunc(r.Context(), func() {
		if ps.take() {
			p.release(res)
		}
	})
	return outcome{}
}

// payable reports whether robotsgate may pay for r: a GET or HEAD without
// a body, decided and let through, to a path that is not always free.
func payable(r *http.Request, st *requestState) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ContentLength == 0 &&
		st.Decided && st.Decision.Origin != "" && !payment.FreeURL(r.URL)
}

// request is the payment of price that the request of st asks for.
func (p *paymentStep) request(st *requestState, t payTerms, price payment.Amount) payment.Request {
	return payment.Request{Identity: st.identity().User, Origin: st.Decision.Origin, Amount: price, Policy: t.policy}
}

// release releases the reservation res.
func (p *paymentStep) release(res payment.Reservation) {
	p.s.metrics.PaymentReservation("released")
	if err := p.wallet.Release(context.Background(), res); err != nil {
		p.s.log.Warn().Err(err).Str("origin", res.Request.Origin).Msg("payment: releasing a reservation failed; it expires")
	}
}

// checkPaymentIdentities refuses a credentials file whose users pay
// (payment=pay, or the global pay mode) without a signing key or a
// max_price: origins charge only signed requests, and nothing is paid
// without a cap.
func checkPaymentIdentities(cfg *config.Config, ids []access.Identity) error {
	for _, id := range ids {
		mode := cfg.Payment.Mode
		if id.Payment != "" {
			mode = config.PaymentMode(id.Payment)
		}
		if mode != config.PaymentPay {
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
