package answer

import "github.com/robotsgate/robotsgate/enforce"

// Reasons of HTTP 402 pay-per-crawl (the proxy's payment step,
// docs/payment.md): a payment made, or why a quote was not paid. The
// origin's answer goes to the client in every case, audited.
const (
	ReasonPaid               enforce.Reason = "paid"                // the origin served the request for a payment within the caps
	ReasonPaymentQuoted      enforce.Reason = "payment-quoted"      // payment.mode report: a quoted 402 passed through
	ReasonPaymentOverCap     enforce.Reason = "payment-over-cap"    // the price is above max_price (or in another currency)
	ReasonBudgetExhausted    enforce.Reason = "budget-exhausted"    // a budget would be exceeded
	ReasonPaymentUnsupported enforce.Reason = "payment-unsupported" // a 402 robotsgate never pays (x402, WWW-Authenticate, a method or path not paid)
	ReasonPaymentFailed      enforce.Reason = "payment-failed"      // a payment could not be made (wallet down, retry failed, bad price)
	ReasonPaymentUnconfirmed enforce.Reason = "payment-unconfirmed" // the paid retry's 2xx carried no crawler-charged
	ReasonPaymentError       enforce.Reason = "payment-error"       // the origin answered with a crawler-error code
)
