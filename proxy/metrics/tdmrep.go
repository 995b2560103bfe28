package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// The label values of robotsgate_tdmrep_verdicts_total: a fixed set,
// never an origin.
var (
	// tdmSources is indexed by tdmrep.Source.
	tdmSources = [4]string{"none", "tdmrep.json", "header", "meta"}
	// tdmReservations is indexed by tdmrep.Reservation, then "unknown"
	// (tdmrep.json unreadable, nothing else declared).
	tdmReservations = [4]string{"unset", "0", "1", "unknown"}
)

// newTDMCounters creates robotsgate_tdmrep_verdicts_total with every
// series (source, reservation) at 0.
func (m *Metrics) newTDMCounters() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_tdmrep_verdicts_total",
		Help: "TDMRep verdicts of decided requests of crawlers TDMRep binds, by where the reservation in force was declared (none|tdmrep.json|header|meta) and its value (unset|0|1|unknown).",
	}, []string{"source", "reservation"})
	for s := range m.tdm {
		for r := range m.tdm[s] {
			m.tdm[s][r] = c.WithLabelValues(tdmSources[s], tdmReservations[r])
		}
	}
	return c
}

// tdmVerdict counts d's TDMRep verdict, when TDMRep was consulted.
func (m *Metrics) tdmVerdict(d *enforce.Decision) {
	v := &d.TDM
	if !v.Checked {
		return
	}
	s, r := int(v.Source), int(v.Reservation)
	if v.Unknown && v.Source == tdmrep.SourceNone {
		r = 3
	}
	if s < len(m.tdm) && r < len(m.tdm[s]) {
		m.tdm[s][r].Inc()
	}
}
