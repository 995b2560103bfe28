package answer

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"

	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// TestForwardErrorSelfDial: a forwarding error that wraps
// selfaddr.ErrSelfDial, however deep, is destination_ip_prohibited; an
// error that only says the same words is not.
func TestForwardErrorSelfDial(t *testing.T) {
	self := &url.Error{Op: "Get", URL: "http://rebound.example/", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: fmt.Errorf("dial 127.0.0.1:9309: %w", selfaddr.ErrSelfDial)}}
	if got := forwardErrorType(self); got != PSIPProhibited {
		t.Errorf("forwardErrorType(%v) = %s, want %s", self, got, PSIPProhibited)
	}
	lookalike := errors.New("the origin says: the destination is robotsgate itself")
	if got := forwardErrorType(lookalike); got == PSIPProhibited {
		t.Errorf("forwardErrorType(%v) = %s: matched by text", lookalike, got)
	}
}

// TestProxyStatusValueMatchesHTTPSFV: the Proxy-Status value written
// directly is what httpsfv marshals for the same item, for details with
// quotes, backslashes, control and non-ASCII bytes and over-long ones,
// and for every error type robotsgate answers with.
func TestProxyStatusValueMatchesHTTPSFV(t *testing.T) {
	types := []string{PSDenied, PSRequestError, PSInternal, PSDNS, PSRefused, PSTerminated, PSConnTimeout,
		PSResponseTimeout, PSTLSCertificate, PSTLSProtocol, PSIPProhibited, PSUnavailable}
	details := []string{"", "disallowed-by-robots: the rule Disallow: /private applies", `a "quoted" \ back\slash`,
		"tab\there\x00nul \u009b csi é", strings.Repeat(`"x\`, 200), "   "}
	for _, ty := range types {
		for _, d := range details {
			item := httpsfv.NewItem(httpsfv.Token("robotsgate"))
			item.Params.Add("error", httpsfv.Token(ty))
			if s := sfString(d); s != "" {
				item.Params.Add("details", s)
			}
			want, err := httpsfv.Marshal(httpsfv.List{item})
			if err != nil {
				t.Fatal(err)
			}
			if got := proxyStatusValue(ty, d); got != want {
				t.Errorf("proxyStatusValue(%q, %q) = %q, want %q", ty, d, got, want)
			}
		}
	}
	if got := proxyStatusValue("not a token", "x"); got != "robotsgate; error=not a token" {
		t.Errorf("invalid token: %q", got)
	}
}
