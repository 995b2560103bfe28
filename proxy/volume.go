package proxy

import (
	"io"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

// volumeStep is the response step that counts every answered request
// (forwarded or refused) for the crawl report's volume records
// (proxy/audit/volume): its origin, identity, status and body bytes. A
// body of unknown length is counted as it is read, when it is closed.
// Refusals and opt-outs are counted from the audit records ([Server.record]).
//
// State: reads the caller (identity: identify) and the request; writes the
// caller (Identity, Identified) ([requestState]).
type volumeStep struct{ v *volume.Aggregator }

func (s volumeStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if s.v == nil || resp == nil || st.Req == nil {
		return resp, outcome{}
	}
	identify(st.Req, st)
	o := volume.Observation{Origin: st.Decision.Origin, User: st.identity().User, Status: resp.StatusCode}
	if !st.Decided || o.Origin == "" {
		o.Origin, _ = enforce.Origin(st.Req.URL)
	}
	switch {
	case st.Req.Method == http.MethodHead || resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode < 200:
		// no body, or a protocol switch whose body goproxy needs as it is
	case resp.ContentLength >= 0:
		o.Bytes = resp.ContentLength
	default:
		resp.Body = &countedBody{ReadCloser: resp.Body, v: s.v, o: o}
		return resp, outcome{}
	}
	s.v.Add(o)
	return resp, outcome{}
}

// countedBody counts the bytes read of a body of unknown length and adds
// its observation when it is closed.
type countedBody struct {
	io.ReadCloser
	v    *volume.Aggregator
	o    volume.Observation
	done bool
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.o.Bytes += int64(n)
	return n, err
}

func (b *countedBody) Close() error {
	if !b.done {
		b.done = true
		b.v.Add(b.o)
	}
	return b.ReadCloser.Close()
}
