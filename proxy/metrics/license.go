package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// licenseStates are the values of the state label of
// robotsgate_license_verdicts_total, indexed by [rsl.State], then
// "unknown" (a license document unreadable and none prohibits): a fixed
// set, never an origin or a license URL.
var licenseStates = [5]string{"none", "permitted", "required", "prohibited", "unknown"}

// licenseMetrics are the RSL license metrics.
type licenseMetrics struct {
	fetches  [5]prometheus.Counter // license document fetches, by statusClass index
	verdicts [5]prometheus.Counter // by licenseStates index
}

// licenseCollectors creates robotsgate_license_fetches_total and
// robotsgate_license_verdicts_total with every series at 0.
func (m *Metrics) licenseCollectors() []prometheus.Collector {
	fetches := byStatusClass("robotsgate_license_fetches_total", "RSL license document fetches", &m.license.fetches)
	verdicts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "robotsgate_license_verdicts_total",
		Help: "RSL license verdicts of decided requests of crawlers that declare purposes, by state (none|permitted|required|prohibited|unknown).",
	}, []string{"state"})
	for i, s := range licenseStates {
		m.license.verdicts[i] = verdicts.WithLabelValues(s)
	}
	return []prometheus.Collector{fetches, verdicts}
}

// licenseVerdict counts d's license verdict, when licenses were consulted.
func (m *Metrics) licenseVerdict(d *enforce.Decision) {
	v := &d.License
	if !v.Checked {
		return
	}
	i := int(v.State)
	if v.Unknown && v.State != rsl.Prohibited {
		i = 4
	}
	if i < len(m.license.verdicts) {
		m.license.verdicts[i].Inc()
	}
}

// LicenseFetched records one license document fetch. Its signature fits
// enforce's fetch hook.
func (m *Metrics) LicenseFetched(_ string, r enforce.FetchResult, _ time.Duration) {
	if m == nil {
		return
	}
	m.license.fetches[statusClass(r.HTTPStatus)].Inc()
	m.revalidated(enforce.DocLicense, r)
}
