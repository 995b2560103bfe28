package proxy

import "github.com/robotsgate/robotsgate/enforce"

// Reasons of the decisions the proxy makes itself, beside the robots.txt
// ones of package enforce. Their values are what audit records, the
// X-Robotsgate-Decision header and the metrics' reason label carry.
const (
	ReasonPaused        enforce.Reason = "origin-paused"     // the origin asked crawlers to back off (503/429 Retry-After)
	ReasonQueueFull     enforce.Reason = "crawl-delay-wait"  // the crawl-delay wait would exceed the maximum
	ReasonRobotTag      enforce.Reason = "robot-tag"         // the response carried a "do not keep" robot tag
	ReasonTunnel        enforce.Reason = "tunnel-unenforced" // CONNECT tunnel opened, paths not enforced
	ReasonPortForbidden enforce.Reason = "port-forbidden"    // CONNECT to a port not in the allow-list
	ReasonSiteClosed    enforce.Reason = "site-disallowed"   // tunnel mode: the whole site is disallowed
	ReasonSelfRequest   enforce.Reason = "self-request"      // the destination is robotsgate itself (proxy or admin port)
	ReasonMisdirected   enforce.Reason = "misdirected"       // a request inside an MITM session names another host:port than its CONNECT
	ReasonShuttingDown  enforce.Reason = "shutting-down"     // robotsgate shut down while the request waited for its crawl-delay slot
)
