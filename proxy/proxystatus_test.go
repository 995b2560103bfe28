package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/robotsgate/robotsgate/proxy/selfaddr"
)

// TestForwardErrorSelfDial: a forwarding error that wraps
// selfaddr.ErrSelfDial, however deep, is destination_ip_prohibited; an
// error that only says the same words is not.
func TestForwardErrorSelfDial(t *testing.T) {
	self := &url.Error{Op: "Get", URL: "http://rebound.example/", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: fmt.Errorf("dial 127.0.0.1:9309: %w", selfaddr.ErrSelfDial)}}
	if got := forwardErrorType(self); got != psIPProhibited {
		t.Errorf("forwardErrorType(%v) = %s, want %s", self, got, psIPProhibited)
	}
	lookalike := errors.New("the origin says: the destination is robotsgate itself")
	if got := forwardErrorType(lookalike); got == psIPProhibited {
		t.Errorf("forwardErrorType(%v) = %s: matched by text", lookalike, got)
	}
}
