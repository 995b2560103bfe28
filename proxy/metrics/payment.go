package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of HTTP 402 pay-per-crawl: what was charged (by currency
// and identity: the proxy users of the credentials file, a bounded set),
// the reservations and how they ended, and the payments refused by
// reason.
type paymentMetrics struct {
	charged      *prometheus.CounterVec // robotsgate_payment_charged_total
	reservations *prometheus.CounterVec // robotsgate_payment_reservations_total
	refusals     *prometheus.CounterVec // robotsgate_payment_refusals_total
}

// The results of a reservation (robotsgate_payment_reservations_total).
var reservationResults = []string{"reserved", "settled", "released"}

// paymentCollectors creates the payment metrics, the reservation results
// at 0.
func (m *Metrics) paymentCollectors() []prometheus.Collector {
	p := &m.payment
	p.charged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_payment_charged_total",
		Help: "Amounts origins charged for paid requests (crawler-charged), in units of the currency, by currency and identity (proxy user; \"\" without credentials).",
	}, []string{"currency", "identity"})
	p.reservations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_payment_reservations_total",
		Help: "Payment reservations made against the budgets (reserved), and how they ended (settled by a charge, or released).",
	}, []string{"result"})
	for _, r := range reservationResults {
		p.reservations.WithLabelValues(r)
	}
	p.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_payment_refusals_total",
		Help: "Quoted prices robotsgate did not pay, by reason (payment-over-cap, budget-exhausted, payment-unsupported, payment-failed, ...).",
	}, []string{"reason"})
	return []prometheus.Collector{p.charged, p.reservations, p.refusals}
}

// PaymentCharged counts a charge of units micro-units of currency for
// identity.
func (m *Metrics) PaymentCharged(currency, identity string, units int64) {
	if m == nil {
		return
	}
	m.payment.charged.WithLabelValues(currency, identity).Add(float64(units) / 1e6)
}

// PaymentReservation counts a reservation made, settled or released
// (result, one of [reservationResults]).
func (m *Metrics) PaymentReservation(result string) {
	if m == nil {
		return
	}
	m.payment.reservations.WithLabelValues(result).Inc()
}

// PaymentRefused counts a quoted price not paid, by reason.
func (m *Metrics) PaymentRefused(reason string) {
	if m == nil {
		return
	}
	m.payment.refusals.WithLabelValues(reason).Inc()
}
