package pay

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
)

// The origin's answer: a 402's quote paid by one retry with
// crawler-exact-price, or passed through with the reason it was not
// paid; crawler-error codes acted on; every exchange a Verdict.

// Answer handles the origin's answer resp to a request that carried the
// up-front reservation u (nil: none).
func (x *Exchange) Answer(ctx context.Context, resp *http.Response, u *Upfront) Verdict {
	if u != nil {
		if v, done := x.upfrontAnswer(resp, u); done {
			return v
		}
	}
	code, action := payment.ParseError(resp.Header)
	if resp.StatusCode != http.StatusPaymentRequired {
		if action == payment.ActionNone {
			return Verdict{Resp: resp}
		}
		return x.codeVerdict(resp, payment.Amount{}, code, action)
	}
	c := payment.Classify(resp.Header)
	switch {
	case c.Kind == payment.ChallengeUnsupported:
		return x.passThrough(resp, answer.ReasonPaymentUnsupported, &audit.Payment{Scheme: c.Scheme, Quote: c.Quote},
			"a "+c.Scheme+" challenge is never paid")
	case c.Kind == payment.ChallengeBadPrice:
		return x.passThrough(resp, answer.ReasonPaymentFailed, &audit.Payment{Code: string(code)},
			"the crawler-price does not parse, and is never paid: "+c.Err.Error())
	case c.Kind == payment.ChallengeNone && action != payment.ActionNone:
		return x.codeVerdict(resp, payment.Amount{}, code, action)
	case c.Kind == payment.ChallengeNone:
		return Verdict{Resp: resp}
	case x.Terms.Mode == config.PaymentReport:
		return Verdict{Resp: resp, Reason: answer.ReasonPaymentQuoted, Detail: "report mode: the quoted price was not paid",
			Record: x.priceRecord(c.Price)}
	case x.Retry == nil:
		return x.passThrough(resp, answer.ReasonPaymentUnsupported, x.priceRecord(c.Price),
			"only GET and HEAD requests without a body, to paths that are not always free, are paid")
	}
	if err := x.Wallet.Remember(ctx, x.Origin, c.Price); err != nil {
		x.Log.Debug().Err(err).Str("origin", x.Origin).Msg("payment: remembering a quote failed")
	}
	return x.pay(ctx, resp, c.Price)
}

// upfrontAnswer handles the answer to a request sent with
// crawler-max-price: a 2xx is paid (or free, without crawler-charged);
// anything else releases the reservation and is handled as usual (done
// is false).
func (x *Exchange) upfrontAnswer(resp *http.Response, u *Upfront) (Verdict, bool) {
	held := u.take()
	charged, err := payment.ParseCharged(resp.Header)
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if ok && err == nil {
		// Settled even when no longer held (the client left meanwhile):
		// the charge is in the ledger whatever the wallet says.
		return x.settle(resp, u.res, charged, true), true
	}
	if held {
		x.release(u.res)
	}
	return Verdict{Resp: resp}, ok // a 2xx without a charge was free
}

// pay reserves price and retries the request with crawler-exact-price;
// a re-quote (a 402 with a requote code and a new price) is followed
// once. Over a cap, the client gets the origin's 402, marked.
func (x *Exchange) pay(ctx context.Context, resp *http.Response, price payment.Amount) Verdict {
	for requoted := false; ; requoted = true {
		res, err := x.Wallet.Reserve(ctx, x.request(price))
		if err != nil {
			return x.refused(resp, price, err)
		}
		x.Metrics.PaymentReservation("reserved")
		paid, err := x.Retry(price)
		if err != nil {
			x.release(res)
			return x.passThrough(resp, answer.ReasonPaymentFailed, x.priceRecord(price), "the paid retry failed: "+err.Error())
		}
		closeBody(resp)
		resp = paid
		code, action := payment.ParseError(paid.Header)
		newPrice, perr := payment.ParsePrice(paid.Header)
		if action == payment.ActionRequote && paid.StatusCode == http.StatusPaymentRequired && perr == nil && !requoted {
			x.release(res)
			price = newPrice
			continue
		}
		return x.answered(paid, res, code, action)
	}
}

// answered is the verdict on the paid retry's answer paid: a 2xx settles
// the reservation res with crawler-charged (none: released,
// unconfirmed); anything else releases it, and a crawler-error code is
// acted on.
func (x *Exchange) answered(paid *http.Response, res payment.Reservation, code payment.ErrorCode, action payment.Action) Verdict {
	price := res.Request.Amount
	if paid.StatusCode >= 200 && paid.StatusCode <= 299 {
		if charged, err := payment.ParseCharged(paid.Header); err == nil {
			return x.settle(paid, res, charged, false)
		}
		x.release(res)
		return Verdict{Resp: paid, Reason: answer.ReasonPaymentUnconfirmed, Record: x.priceRecord(price),
			Detail: "the paid retry was served without crawler-charged: the reservation was released"}
	}
	x.release(res)
	if action != payment.ActionNone {
		return x.codeVerdict(paid, price, code, action)
	}
	return x.passThrough(paid, answer.ReasonPaymentFailed, x.priceRecord(price), fmt.Sprintf("the paid retry was answered %d", paid.StatusCode))
}

// settle records the charge of res: the ledger's record.
func (x *Exchange) settle(resp *http.Response, res payment.Reservation, charged payment.Amount, upfront bool) Verdict {
	detail := "paid " + charged.String()
	set, err := x.Wallet.Settle(context.Background(), res, charged)
	switch {
	case err != nil:
		x.Log.Warn().Err(err).Str("origin", res.Request.Origin).Msg("payment: recording a charge failed; it is in the ledger")
		detail += "; the wallet could not record it: " + err.Error()
	case set.Duplicate:
		detail += "; the reservation had been settled already: not counted again"
	case set.Over:
		detail += "; more than the " + res.Request.Amount.String() + " reserved"
	}
	x.Metrics.PaymentReservation("settled")
	x.Metrics.PaymentCharged(charged.Currency, res.Request.Identity, charged.Units)
	rec := x.priceRecord(res.Request.Amount)
	rec.Charged, rec.Upfront = charged.Decimal(), upfront
	if charged.Currency != res.Request.Amount.Currency {
		rec.Charged = charged.String()
	}
	return Verdict{Resp: resp, Reason: answer.ReasonPaid, Paid: true, Detail: detail, Record: rec}
}

// refused passes the 402 resp through because Reserve refused price with
// err: over the cap, a budget, or the wallet unavailable.
func (x *Exchange) refused(resp *http.Response, price payment.Amount, err error) Verdict {
	rec := x.priceRecord(price)
	var be *payment.BudgetError
	switch {
	case errors.As(err, &be):
		rec.Budget = be.Counter.Budget.String()
		return x.passThrough(resp, answer.ReasonBudgetExhausted, rec, "the budget "+rec.Budget+" would be exceeded")
	case errors.Is(err, payment.ErrOverCap):
		return x.passThrough(resp, answer.ReasonPaymentOverCap, rec, "the price "+price.String()+" is over max_price")
	}
	return x.passThrough(resp, answer.ReasonPaymentFailed, rec, "nothing is paid: "+err.Error())
}

// codeVerdict acts on the crawler-error code of resp:
// [payment.CodeInternalError] pauses the origin (as a 503 does, unless
// it came with a 503 or 429, which the politeness step observes itself);
// every code is audited, and the answer goes to the client.
func (x *Exchange) codeVerdict(resp *http.Response, price payment.Amount, code payment.ErrorCode, action payment.Action) Verdict {
	if action == payment.ActionBackoff && x.Backoff != nil && resp.StatusCode != http.StatusServiceUnavailable &&
		resp.StatusCode != http.StatusTooManyRequests {
		x.Backoff(resp.Header.Get("Retry-After"))
	}
	rec := &audit.Payment{}
	if !price.IsZero() {
		rec = x.priceRecord(price)
	}
	rec.Code, rec.Action = string(code), action.String()
	return x.passThrough(resp, answer.ReasonPaymentError, rec, "the origin answered crawler-error: "+string(code)+" ("+action.String()+")")
}

// passThrough marks resp, which goes to the client, with why it was not
// paid (X-Robotsgate-Decision, Proxy-Status; in report mode resp stays
// unchanged).
func (x *Exchange) passThrough(resp *http.Response, reason enforce.Reason, rec *audit.Payment, detail string) Verdict {
	if x.Terms.Mode == config.PaymentPay {
		resp.Header.Set(answer.HeaderDecision, string(reason))
		answer.SetProxyStatus(resp.Header, answer.PSDenied, detail)
	}
	x.Metrics.PaymentRefused(string(reason))
	return Verdict{Resp: resp, Reason: reason, Detail: detail, Record: rec}
}

// priceRecord is the ledger's record of a quoted price.
func (x *Exchange) priceRecord(price payment.Amount) *audit.Payment {
	return &audit.Payment{Currency: price.Currency, Quoted: price.Decimal(), MaxPrice: x.Terms.Policy.MaxPrice.String()}
}

// closeBody closes resp's body, if any.
func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}
