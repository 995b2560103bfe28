package metrics

import "github.com/prometheus/client_golang/prometheus"

// The label values of robotsgate_signatures_total: a fixed set.
var (
	signKinds   = [2]string{"forward", "fetch"}           // forwarded requests, robotsgate's own fetches
	signResults = [3]string{"signed", "skipped", "error"} // as proxy/signing.Result names them
)

// newSigningCounters creates robotsgate_signatures_total with every
// series (kind, result) at 0.
func (m *Metrics) newSigningCounters() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_signatures_total",
		Help: "Web Bot Auth signatures, by kind (forward: forwarded requests; fetch: robotsgate's own robots.txt and tdmrep.json fetches) and result (signed; skipped: the request's own signature fields conflict; error).",
	}, []string{"kind", "result"})
	for k := range m.signed {
		for r := range m.signed[k] {
			m.signed[k][r] = c.WithLabelValues(signKinds[k], signResults[r])
		}
	}
	return c
}

// Signed counts one request signed (or not) with a result of
// proxy/signing: kind is "forward" or "fetch".
func (m *Metrics) Signed(kind, result string) {
	if m == nil {
		return
	}
	for k, kn := range signKinds {
		for r, rn := range signResults {
			if kn == kind && rn == result {
				m.signed[k][r].Inc()
			}
		}
	}
}
