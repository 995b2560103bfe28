package proxy

import "github.com/robotsgate/robotsgate/enforce"

// Reasons of the refusals and reports the proxy makes itself; robots.txt
// reasons are enforce's, politeness reasons politeness'. Their values
// are part of the audit log format.
const (
	ReasonRobotTag      enforce.Reason = "robot-tag"         // the response carried a "do not keep" robot tag
	ReasonTunnel        enforce.Reason = "tunnel-unenforced" // CONNECT tunnel opened, paths not enforced
	ReasonPortForbidden enforce.Reason = "port-forbidden"    // CONNECT to a port not in the allow-list
	ReasonSiteClosed    enforce.Reason = "site-disallowed"   // tunnel mode: the whole site is disallowed
	ReasonSelfRequest   enforce.Reason = "self-request"      // the destination is robotsgate itself (proxy or admin port): refused
	ReasonMisdirected   enforce.Reason = "misdirected"       // a request inside an MITM session names another host:port than its CONNECT
)
