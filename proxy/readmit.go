package proxy

import (
	"context"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// readmitStep re-applies the access control to each request of an MITM
// session. The requests inside a session carry no credentials of their
// own: the CONNECT was admitted, and its [access.Grant] stays with the
// session. When the settings a request enters with (those of the last
// reload) no longer admit the CONNECT's client address or credentials
// ([access.Access.Readmit]), the request is refused (403
// access-revoked) and the session ends after that answer, so that a
// credential removed from the credentials file, or a network removed
// from auth.allow_cidrs, stops working on connections already open.
//
// Sessions of the transparent listener were never admitted by the
// access control (it applies to the proxy port), and are left alone.
//
// State: reads the via (Session, and through it the CONNECT's caller) and
// Live; writes the verdict (Answered through settle) ([requestState]).
type readmitStep struct{}

func (readmitStep) onRequest(r *http.Request, st *requestState) outcome {
	sess := st.Session
	if sess == nil || sess.Redirected != nil || st.Live == nil {
		return outcome{}
	}
	code := st.Live.acl.Readmit(sess.Client, sess.Grant)
	if code == 0 {
		return outcome{}
	}
	why := "the credentials it authenticated with are no longer accepted"
	if code == http.StatusForbidden {
		why = "its client address is no longer in auth.allow_cidrs"
	}
	d := enforce.Decision{Reason: answer.ReasonAccessRevoked, URL: enforce.RedactedURL(r.URL), Agent: sess.Agent,
		Detail: "the configuration was reloaded since this session's CONNECT, and " + why + ": open a new CONNECT"}
	if o, err := enforce.Origin(r.URL); err == nil {
		d.Origin = o
	}
	if sess.Conn != nil {
		context.AfterFunc(r.Context(), sess.Conn.EndSession) // once the answer is written
	}
	o := refuse(d)
	o.close = true
	return o
}
