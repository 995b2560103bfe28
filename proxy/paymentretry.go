package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// The response side of [paymentStep]: a 402's quote paid by one signed
// retry with crawler-exact-price, or passed through and audited with the
// reason it was not paid; crawler-error codes acted on.

// onResponse pays, passes through or audits the origin's answer: see
// [paymentStep].
func (p *paymentStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	t := p.terms(st)
	if t.mode == config.PaymentOff {
		return resp, outcome{}
	}
	ps := payOf(st)
	if ps != nil && ps.upfront != nil {
		if o, done := p.upfrontAnswer(resp, st, ps); done {
			return resp, o
		}
	}
	code, action := payment.ParseError(resp.Header)
	if resp.StatusCode != http.StatusPaymentRequired {
		if action == payment.ActionNone {
			return resp, outcome{}
		}
		return resp, p.codeOutcome(resp, st, payment.Amount{}, code, action)
	}
	c := payment.Classify(resp.Header)
	switch {
	case c.Kind == payment.ChallengeUnsupported:
		return resp, p.passThrough(resp, st, answer.ReasonPaymentUnsupported, &audit.Payment{Scheme: c.Scheme, Quote: c.Quote},
			"a "+c.Scheme+" challenge is never paid")
	case c.Kind == payment.ChallengeBadPrice:
		return resp, p.passThrough(resp, st, answer.ReasonPaymentFailed, &audit.Payment{Code: string(code)},
			"the crawler-price does not parse, and is never paid: "+c.Err.Error())
	case c.Kind == payment.ChallengeNone && action != payment.ActionNone:
		return resp, p.codeOutcome(resp, st, payment.Amount{}, code, action)
	case c.Kind == payment.ChallengeNone:
		return resp, outcome{}
	case t.mode == config.PaymentReport:
		return resp, p.notePrice(resp, st, answer.ReasonPaymentQuoted, c.Price, t, "report mode: the quoted price was not paid")
	case ps == nil:
		return resp, p.passThrough(resp, st, answer.ReasonPaymentUnsupported, priceRecord(c.Price, t),
			"only GET and HEAD requests without a body, to paths that are not always free, are paid")
	}
	if err := p.wallet.Remember(context.WithoutCancel(st.Req.Context()), st.Decision.Origin, c.Price); err != nil {
		p.s.log.Debug().Err(err).Str("origin", st.Decision.Origin).Msg("payment: remembering a quote failed")
	}
	return p.pay(resp, st, ps, c.Price)
}

// upfrontAnswer handles the answer to a request sent with
// crawler-max-price: a 2xx is paid (or free, without crawler-charged);
// anything else releases the reservation and is handled as usual (done
// is false).
func (p *paymentStep) upfrontAnswer(resp *http.Response, st *requestState, ps *payState) (outcome, bool) {
	res, held := *ps.upfront, ps.take()
	charged, err := payment.ParseCharged(resp.Header)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 && err == nil {
		// Settled even when no longer held (the client left meanwhile):
		// the charge is in the ledger whatever the wallet says.
		return p.settleCharge(resp, st, res, charged, true), true
	}
	if held {
		p.release(res)
	}
	free := resp.StatusCode >= 200 && resp.StatusCode <= 299 // served without a charge
	return outcome{}, free
}

// pay reserves price and retries the request with crawler-exact-price;
// a re-quote (a 402 with a requote code and a new price) is followed
// once. Over a cap, the client gets the origin's 402, marked.
func (p *paymentStep) pay(resp *http.Response, st *requestState, ps *payState, price payment.Amount) (*http.Response, outcome) {
	t := p.terms(st)
	for requoted := false; ; requoted = true {
		res, err := p.wallet.Reserve(st.Req.Context(), p.request(st, t, price))
		if err != nil {
			return resp, p.refused(resp, st, price, err)
		}
		p.s.metrics.PaymentReservation("reserved")
		paid, err := p.retry(st, ps, price)
		if err != nil {
			p.release(res)
			return resp, p.passThrough(resp, st, answer.ReasonPaymentFailed, priceRecord(price, t), "the paid retry failed: "+err.Error())
		}
		closeBody(resp)
		resp = paid
		code, action := payment.ParseError(paid.Header)
		newPrice, perr := payment.ParsePrice(paid.Header)
		if action == payment.ActionRequote && paid.StatusCode == http.StatusPaymentRequired && perr == nil && !requoted {
			p.release(res)
			price = newPrice
			continue
		}
		return p.answered(paid, st, res, code, action)
	}
}

// retry sends the request again, as it was before it was signed, with
// crawler-exact-price: price, signed (the header covered), through the
// transport and to the pinned address of the first attempt (plain HTTP
// and MITM sessions alike).
func (p *paymentStep) retry(st *requestState, ps *payState, price payment.Amount) (*http.Response, error) {
	signer := p.s.settings(st).signers.forIdentity(st.identity())
	if signer == nil {
		return nil, errors.New("no signing key: origins charge only signed requests")
	}
	r := st.Req.WithContext(st.Req.Context()) // its context holds its pin
	r.Header = ps.header.Clone()
	r.Body, r.ContentLength = http.NoBody, 0
	if _, ok := r.Header["User-Agent"]; !ok { // as forwardStep.onRequest: no Go-http-client User-Agent
		r.Header["User-Agent"] = []string{""}
	}
	payment.SetExactPrice(r.Header, price)
	if _, err := signer.Sign(r); err != nil {
		p.s.metrics.Signed("forward", signing.Result(err))
		return nil, fmt.Errorf("signing the paid retry: %w", err)
	}
	p.s.metrics.Signed("forward", signing.ResultSigned)
	resp, err := p.s.roundTrip(forwardable(r)) // as forwardTripper sends it: pinned, traced (transport.go)
	if err != nil {
		return nil, err
	}
	p.s.received(resp, st) // robot-tag scan, body wrapping (forward.go)
	resp, _ = hopHeadersStep{}.onResponse(resp, st)
	return resp, nil
}

// answered is the outcome of the paid retry's answer paid: a 2xx settles
// the reservation res with crawler-charged (none: released,
// unconfirmed); anything else releases it, and a crawler-error code is
// acted on.
func (p *paymentStep) answered(paid *http.Response, st *requestState, res payment.Reservation,
	code payment.ErrorCode, action payment.Action) (*http.Response, outcome) {
	price := res.Request.Amount
	if paid.StatusCode >= 200 && paid.StatusCode <= 299 {
		if charged, err := payment.ParseCharged(paid.Header); err == nil {
			return paid, p.settleCharge(paid, st, res, charged, false)
		}
		p.release(res)
		return paid, p.notePrice(paid, st, answer.ReasonPaymentUnconfirmed, price, p.terms(st),
			"the paid retry was served without crawler-charged: the reservation was released")
	}
	p.release(res)
	if action != payment.ActionNone {
		return paid, p.codeOutcome(paid, st, price, code, action)
	}
	return paid, p.passThrough(paid, st, answer.ReasonPaymentFailed, priceRecord(price, p.terms(st)),
		fmt.Sprintf("the paid retry was answered %d", paid.StatusCode))
}

// settleCharge records the charge of res and returns the ledger's record.
func (p *paymentStep) settleCharge(resp *http.Response, st *requestState, res payment.Reservation, charged payment.Amount, upfront bool) outcome {
	detail := "paid " + charged.String()
	set, err := p.wallet.Settle(context.Background(), res, charged)
	switch {
	case err != nil:
		p.s.log.Warn().Err(err).Str("origin", res.Request.Origin).Msg("payment: recording a charge failed; it is in the ledger")
		detail += "; the wallet could not record it: " + err.Error()
	case set.Duplicate:
		detail += "; the reservation had ended before the charge (the client left): not counted against the budgets"
	case set.Over:
		detail += "; more than the " + res.Request.Amount.String() + " reserved"
	}
	p.s.metrics.PaymentReservation("settled")
	p.s.metrics.PaymentCharged(charged.Currency, res.Request.Identity, charged.Units)
	rec := priceRecord(res.Request.Amount, p.terms(st))
	rec.Charged, rec.Upfront = charged.Decimal(), upfront
	if charged.Currency != res.Request.Amount.Currency {
		rec.Charged = charged.String()
	}
	o := note(audit.DecisionPaid, p.decision(st, answer.ReasonPaid, detail))
	o.status, o.pay = resp.StatusCode, rec
	return o
}

// refused passes the 402 resp through because Reserve refused price with
// err: over the cap, a budget, or the wallet unavailable.
func (p *paymentStep) refused(resp *http.Response, st *requestState, price payment.Amount, err error) outcome {
	rec := priceRecord(price, p.terms(st))
	var be *payment.BudgetError
	switch {
	case errors.As(err, &be):
		rec.Budget = be.Counter.Budget.String()
		return p.passThrough(resp, st, answer.ReasonBudgetExhausted, rec, "the budget "+rec.Budget+" would be exceeded")
	case errors.Is(err, payment.ErrOverCap):
		return p.passThrough(resp, st, answer.ReasonPaymentOverCap, rec, "the price "+price.String()+" is over max_price")
	}
	return p.passThrough(resp, st, answer.ReasonPaymentFailed, rec, "nothing is paid: "+err.Error())
}

// codeOutcome acts on the crawler-error code of resp: [payment.CodeInternalError]
// pauses the origin (as a 503 does); every code is audited, and the
// answer goes to the client.
func (p *paymentStep) codeOutcome(resp *http.Response, st *requestState, price payment.Amount,
	code payment.ErrorCode, action payment.Action) outcome {
	if action == payment.ActionBackoff && st.Permit != nil && resp.StatusCode != http.StatusServiceUnavailable &&
		resp.StatusCode != http.StatusTooManyRequests { // those the politeness step observes itself
		p.polite.Observe(context.WithoutCancel(st.Req.Context()), st.Permit.Origin, http.StatusServiceUnavailable,
			resp.Header.Get("Retry-After"), st.Permit.Admitted)
	}
	rec := &audit.Payment{Code: string(code), Action: action.String()}
	if !price.IsZero() {
		rec = priceRecord(price, p.terms(st))
		rec.Code, rec.Action = string(code), action.String()
	}
	return p.passThrough(resp, st, answer.ReasonPaymentError, rec, "the origin answered crawler-error: "+string(code)+" ("+action.String()+")")
}

// passThrough marks resp, which goes to the client, with why it was not
// paid (X-Robotsgate-Decision, Proxy-Status; in report mode resp stays
// unchanged) and audits it.
func (p *paymentStep) passThrough(resp *http.Response, st *requestState, reason enforce.Reason, rec *audit.Payment, detail string) outcome {
	if p.terms(st).mode == config.PaymentPay {
		resp.Header.Set(answer.HeaderDecision, string(reason))
		answer.SetProxyStatus(resp.Header, answer.PSDenied, detail)
	}
	p.s.metrics.PaymentRefused(string(reason))
	o := note(audit.DecisionAllowed, p.decision(st, reason, detail))
	o.status, o.pay = resp.StatusCode, rec
	return o
}

// notePrice audits resp, unchanged, with the price it quoted.
func (p *paymentStep) notePrice(resp *http.Response, st *requestState, reason enforce.Reason, price payment.Amount, t payTerms, detail string) outcome {
	o := note(audit.DecisionAllowed, p.decision(st, reason, detail))
	o.status, o.pay = resp.StatusCode, priceRecord(price, t)
	return o
}

// decision is the request's decision, with reason and detail.
func (p *paymentStep) decision(st *requestState, reason enforce.Reason, detail string) enforce.Decision {
	d := st.Decision
	d.Allowed, d.Reason, d.Detail = true, reason, detail
	d.Rule, d.Line = "", 0
	return d
}

// priceRecord is the ledger's record of a quoted price under t.
func priceRecord(price payment.Amount, t payTerms) *audit.Payment {
	return &audit.Payment{Currency: price.Currency, Quoted: price.Decimal(), MaxPrice: t.policy.MaxPrice.String()}
}

// closeBody closes resp's body, if any.
func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}
