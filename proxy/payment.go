package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/pay"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// paymentStep is HTTP 402 pay-per-crawl (docs/payment.md) around
// package pay. On the request side (after every step that may refuse the
// request, before it is signed) it removes the price headers a client
// set, keeps the request's header for a paid retry, and, for an origin
// that quoted before, reserves the quoted price and sends it up front as
// crawler-max-price. On the response side it hands the origin's answer to
// the request's [pay.Exchange], which pays a 402's quote within the caps
// by one retry ([paymentStep.retry]: signed afresh, through the same
// transport and pinned address) or passes it through, saying why; every
// exchange is audited (the ledger).
type paymentStep struct {
	s      *Server
	cfg    config.PaymentConfig
	polite *politeness.Politeness // [payment.CodeInternalError] pauses the origin as a 503 does
}

func newPaymentStep(cfg *config.Config, s *Server, pol *politeness.Politeness) *paymentStep {
	return &paymentStep{s: s, cfg: cfg.Payment, polite: pol}
}

// payState is the payment state of a request pay mode may pay for
// ([payOf]): its header as it was before it was signed (the paid retry is
// signed afresh) and the reservation of the price it carries up front.
// It rides in the request's context, so that the request state keeps its
// allocation size.
type payState struct {
	header  http.Header
	upfront *pay.Upfront // nil when the request carries no price
}

// payKey is the context key of a request's *[payState].
type payKey struct{}

// payOf returns the payment state of the request of st, nil when none.
func payOf(st *requestState) *payState {
	if st.Req == nil {
		return nil
	}
	ps, _ := st.Req.Context().Value(payKey{}).(*payState)
	return ps
}

func (p *paymentStep) onRequest(r *http.Request, st *requestState) outcome {
	if st.Answered || !p.mayPay(r, st) {
		return outcome{}
	}
	identify(r, st)
	if pay.TermsOf(&p.cfg, st.identity()).Mode != config.PaymentPay {
		return outcome{}
	}
	payment.StripPriceHeaders(r.Header) // robotsgate is the wallet: a client's own price header would go past it
	if !payable(r, st) {
		return outcome{}
	}
	ps := &payState{header: r.Header.Clone()}
	st.Req = r.WithContext(context.WithValue(r.Context(), payKey{}, ps))
	x := p.exchange(st, nil)
	if ps.upfront = x.Upfront(r.Context(), r.Header); ps.upfront != nil {
		// Whatever ends the request without its response step (a failed
		// forward, a client gone) releases the reservation; the forward
		// goes on to its answer all the same ([priced]).
		context.AfterFunc(r.Context(), func() { x.End(ps.upfront) })
	}
	return outcome{}
}

// priced returns req, about to be forwarded, with a context the client
// leaving does not cancel when it carries a price up front: the origin
// may charge a request it received, so its answer is read and settled (a
// charge answered after the reservation was released still counts,
// [payment.Wallet]); the transport's response header timeout bounds the
// wait. Any other req is returned as it is.
func priced(req *http.Request, st *requestState) *http.Request {
	if ps := payOf(st); ps == nil || ps.upfront == nil {
		return req
	}
	return req.WithContext(context.WithoutCancel(req.Context()))
}

func (p *paymentStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if pay.TermsOf(&p.cfg, st.identity()).Mode == config.PaymentOff {
		return resp, outcome{}
	}
	ps := payOf(st)
	var u *pay.Upfront
	if ps != nil {
		u = ps.upfront
	}
	v := p.exchange(st, ps).Answer(context.WithoutCancel(st.Req.Context()), resp, u)
	if v.Reason == "" {
		return v.Resp, outcome{}
	}
	d := st.Decision
	d.Allowed, d.Reason, d.Detail, d.Rule, d.Line = true, v.Reason, v.Detail, "", 0
	auditAs := audit.DecisionAllowed // the request was forwarded; the origin's answer goes to the client
	if v.Paid {
		auditAs = audit.DecisionPaid
	}
	o := note(auditAs, d)
	o.status, o.pay = v.Resp.StatusCode, v.Record
	return v.Resp, o
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

// payable reports whether robotsgate may pay for r: decided and let
// through, and [pay.Payable] (a GET or HEAD without a body, to a path
// that is not always free).
func payable(r *http.Request, st *requestState) bool {
	return st.Decided && st.Decision.Origin != "" && pay.Payable(r)
}

// exchange is the payment exchange of the request of st; without its
// payment state ps it cannot retry (nothing is paid).
func (p *paymentStep) exchange(st *requestState, ps *payState) *pay.Exchange {
	x := &pay.Exchange{Wallet: p.s.wallet, Metrics: p.s.metrics, Log: p.s.log, Terms: pay.TermsOf(&p.cfg, st.identity()),
		Identity: st.identity().User, Origin: st.Decision.Origin}
	if ps != nil {
		x.Retry = func(price payment.Amount) (*http.Response, error) { return p.retry(st, ps, price) }
	}
	if st.Permit != nil {
		x.Backoff = func(retryAfter string) {
			p.polite.Observe(context.WithoutCancel(st.Req.Context()), st.Permit.Origin, http.StatusServiceUnavailable, retryAfter, st.Permit.Admitted)
		}
	}
	return x
}

// retry sends the request again, as it was before it was signed, with
// crawler-exact-price: price, signed (the header covered), through the
// transport and to the pinned address of the first attempt (plain HTTP
// and MITM sessions alike), as [forwardTripper] sends it.
func (p *paymentStep) retry(st *requestState, ps *payState, price payment.Amount) (*http.Response, error) {
	signer := p.s.settings(st).signers.ForIdentity(st.identity())
	if signer == nil {
		return nil, errors.New("no signing key: origins charge only signed requests")
	}
	r := pay.RetryRequest(st.Req, ps.header, price) // as forwardStep.onRequest: no Go-http-client User-Agent
	if _, err := signer.Sign(r); err != nil {
		p.s.metrics.Signed("forward", signing.Result(err))
		return nil, fmt.Errorf("signing the paid retry: %w", err)
	}
	p.s.metrics.Signed("forward", signing.ResultSigned)
	resp, err := p.s.roundTrip(forwardable(r)) // pinned, traced (transport.go)
	if err != nil {
		return nil, err
	}
	p.s.received(resp, st) // robot-tag scan, body wrapping (forward.go)
	resp, _ = hopHeadersStep{}.onResponse(resp, st)
	return resp, nil
}
