package audit

import "github.com/rs/zerolog"

// The ledger of HTTP 402 pay-per-crawl: a payment, or a payment
// robotsgate did not make, in an audit record.

// DecisionPaid is the [Event.Decision] of a request robotsgate paid for:
// the origin served it for the amount in [Event.Payment].
const DecisionPaid = "paid"

// Payment is what a record says of a 402 pay-per-crawl exchange.
type Payment struct {
	Currency string // of the amounts below, e.g. USD
	Quoted   string // the price the origin quoted (crawler-price), a decimal ("0.01"); "" when none
	Charged  string // what the origin charged (crawler-charged), a decimal; "" when nothing was
	MaxPrice string // the cap in force ("USD 0.02"), "" when none
	// Code is the crawler-error code of the origin's answer, "" when
	// none; Action what robotsgate did about it (stop, fix, requote,
	// backoff).
	Code, Action string
	// Scheme and Quote are those of a challenge robotsgate does not pay
	// (x402, Payment, License): its scheme and amount as written.
	Scheme, Quote string
	// Budget names the budget that refused the payment, e.g.
	// "fleet/day USD 0.1".
	Budget string
	// Upfront says the request carried crawler-max-price from the start
	// (the origin had quoted before).
	Upfront bool
}

// paymentFields writes e's payment fields, when it has some.
func paymentFields(ev *zerolog.Event, e *Event) {
	p := e.Payment
	if p == nil {
		return
	}
	d := zerolog.Dict()
	add := func(k, v string) {
		if v != "" {
			d.Str(k, v)
		}
	}
	add("currency", p.Currency)
	add("quoted", p.Quoted)
	add("charged", p.Charged)
	add("max_price", p.MaxPrice)
	add("code", p.Code)
	add("action", p.Action)
	add("scheme", p.Scheme)
	add("quote", p.Quote)
	add("budget", p.Budget)
	if p.Upfront {
		d.Bool("upfront", true)
	}
	ev.Dict("payment", d)
}
