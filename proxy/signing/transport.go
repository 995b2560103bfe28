package signing

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// Results of signing one request, as [Holder] reports them.
const (
	ResultSigned  = "signed"  // signed
	ResultSkipped = "skipped" // not signed: the request's own signature fields conflict ([ErrConflict])
	ResultError   = "error"   // not signed: the signature could not be made
)

// Holder holds the Signer in force (nil: none), which a configuration
// reload replaces, for the requests robotsgate makes itself (robots.txt
// and other policy files). The zero Holder holds none.
type Holder struct {
	cur atomic.Pointer[held]
}

type held struct {
	s       *Signer
	observe func(result string)
}

// Set puts s in force (nil: sign nothing); observe, when not nil, is told
// the result of every request signed or not signed with it.
func (h *Holder) Set(s *Signer, observe func(result string)) {
	h.cur.Store(&held{s: s, observe: observe})
}

// Signer returns the Signer in force, nil when none.
func (h *Holder) Signer() *Signer {
	if c := h.cur.Load(); c != nil {
		return c.s
	}
	return nil
}

// Transport returns next with every request signed by the Signer in
// force at the time it is sent; a request that cannot be signed goes
// unsigned.
func (h *Holder) Transport(next http.RoundTripper) http.RoundTripper {
	return &transport{h: h, next: next}
}

type transport struct {
	h    *Holder
	next http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	c := t.h.cur.Load()
	if c == nil || c.s == nil {
		return t.next.RoundTrip(r)
	}
	out := r.Clone(r.Context()) // a RoundTripper must not change its request
	_, err := c.s.Sign(out)
	if c.observe != nil {
		c.observe(Result(err))
	}
	if err != nil {
		out = r
	}
	return t.next.RoundTrip(out)
}

// Result is the result label of a Sign that returned err.
func Result(err error) string {
	switch {
	case err == nil:
		return ResultSigned
	case errors.Is(err, ErrConflict):
		return ResultSkipped
	}
	return ResultError
}
