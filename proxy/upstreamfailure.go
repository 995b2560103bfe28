package proxy

import (
	"errors"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/rs/zerolog"
)

// upstreamFailureStep is the first response step: it answers a request whose
// forwarding failed with a 502 (504 on timeouts) that names the origin
// and the error ([upstreamOutcome]), instead of goproxy's bare 500.
//
// State: reads the caller (Agent) and the verdict (Answered); writes the
// verdict (Answered through settle) ([requestState]).
type upstreamFailureStep struct{ log zerolog.Logger }

func (u upstreamFailureStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if resp != nil {
		return resp, outcome{}
	}
	err := st.Err
	if err == nil {
		err = errors.New("no response")
	}
	return nil, forwardFailed(u.log, st.Req, st, err)
}

// forwardFailed logs, at warn, that forwarding r failed with err, and
// returns the outcome that answers it.
func forwardFailed(log zerolog.Logger, r *http.Request, st *requestState, err error) outcome {
	o := upstreamOutcome(r, st.Agent, err)
	log.Warn().Str("origin", o.d.Origin).Str("url", o.d.URL).Str("error", enforce.RedactURLsIn(err.Error())).
		Int("status", o.status).Msg("forwarding failed")
	return o
}
