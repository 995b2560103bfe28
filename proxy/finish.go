package proxy

import (
	"net/http"

	"github.com/robotsgate/robotsgate/proxy/answer"
)

// finishStep is the response step that marks forwarded responses that report
// mode let through although they would have been blocked, and makes
// bodies of unknown length stream to the client as they arrive.
//
// State: reads the verdict (Decision, Decided, Answered); writes nothing
// ([requestState]).
type finishStep struct{}

func (finishStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if resp != nil && resp.ContentLength < 0 && resp.Body != nil && resp.Body != http.NoBody {
		// goproxy flushes after every write only when the response header
		// says chunked; Go's client moves that into resp.TransferEncoding,
		// so without this a slow stream (SSE, long poll) would sit in the
		// server's write buffer. net/http applies (or, for HTTP/1.0
		// clients, drops) the chunked coding itself.
		resp.Header.Set("Transfer-Encoding", "chunked")
	}
	if resp != nil && st.Decided && !st.Decision.Allowed && !st.Answered {
		answer.SetReportHeaders(resp.Header, st.Decision)
	}
	return resp, outcome{}
}
