package proxy

import (
	"net/http"

	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// inflightStep is the step that counts a request in flight, and, on the
// response side, its decision and upstream failure; it ends the in-flight
// count there, which every request's response side reaches. In flight
// thus means "between arrival and response headers": deciding, waiting
// for a crawl-delay slot or for the origin.
//
// State: reads the verdict (Decision, Decided); writes nothing
// ([requestState]).
type inflightStep struct{ m *metrics.Metrics }

func (f inflightStep) onRequest(*http.Request, *requestState) outcome {
	f.m.RequestStarted()
	return outcome{}
}

func (f inflightStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	f.m.RequestDone()
	if st.Decided {
		f.m.Decision(st.Decision)
	}
	if st.Err != nil {
		f.m.UpstreamError()
	}
	return resp, outcome{}
}
