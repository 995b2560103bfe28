package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/enforce"
)

// Courteous re-fetches: the 304s that answered a conditional fetch of a
// policy document, which kept the copy in force without downloading it.

// notModifiedCollector creates robotsgate_policy_not_modified_total and
// sets m.notModified to its counters.
func (m *Metrics) notModifiedCollector() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_policy_not_modified_total",
		Help: "Conditional re-fetches of policy documents answered 304 Not Modified (the copy was kept), by document (robots.txt, tdmrep.json, license document).",
	}, []string{"document"})
	for _, d := range []enforce.Doc{enforce.DocRobots, enforce.DocTDMRep, enforce.DocLicense} {
		m.notModified[d] = v.WithLabelValues(d.String())
	}
	return v
}

// revalidated counts r when it is a 304 to a conditional fetch of doc.
func (m *Metrics) revalidated(doc enforce.Doc, r enforce.FetchResult) {
	if r.NotModified && int(doc) < len(m.notModified) {
		m.notModified[doc].Inc()
	}
}
