package metrics

import (
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestNotModifiedCounted(t *testing.T) {
	m := New(testReasons)
	h := m.EnforceHooks()
	nm := enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 304, NotModified: true}
	h.Fetched("http://x", nm, time.Millisecond)
	h.Fetched("http://x", nm, time.Millisecond)
	h.Fetched("http://x", enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 304}, time.Millisecond) // not asked for
	h.TDMFetched("http://x", nm, time.Millisecond)
	h.LicenseFetched("http://x/l.xml", nm, time.Millisecond)
	exp := testsupport.Exposition(m.Handler())
	for s, w := range map[string]float64{
		`robotsgate_policy_not_modified_total{document="robots.txt"}`:       2,
		`robotsgate_policy_not_modified_total{document="tdmrep.json"}`:      1,
		`robotsgate_policy_not_modified_total{document="license document"}`: 1,
	} {
		if v := testsupport.MetricValue(t, exp, s); v != w {
			t.Errorf("%s = %v, want %v", s, v, w)
		}
	}
}
