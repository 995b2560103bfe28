package config

// Typed values of the options that pick one of a few modes. Each type
// lists its values and reports with Valid whether a value is one of them;
// Validate checks every mode option with it.

// Mode is a value of mode.
type Mode string

// Values of mode.
const (
	ModeEnforce Mode = "enforce" // refuse what robots.txt disallows
	ModeReport  Mode = "report"  // decide and audit, but forward everything
)

// Valid reports whether m is a value of mode.
func (m Mode) Valid() bool { return m == ModeEnforce || m == ModeReport }

// AuditLevel is a value of audit.
type AuditLevel string

// Values of audit.
const (
	AuditBlocked AuditLevel = "blocked" // audit refusals (and report-mode would-be refusals)
	AuditAll     AuditLevel = "all"     // audit every decision
)

// Valid reports whether a is a value of audit.
func (a AuditLevel) Valid() bool { return a == AuditBlocked || a == AuditAll }

// HTTPSMode is a value of https.mode.
type HTTPSMode string

// Values of https.mode.
const (
	// HTTPSModeMITM intercepts CONNECT with robotsgate's CA: every request
	// inside the TLS session is decided like a plain HTTP one.
	HTTPSModeMITM HTTPSMode = "mitm"
	// HTTPSModeTunnel opens opaque tunnels, deciding per host only.
	HTTPSModeTunnel HTTPSMode = "tunnel"
)

// Valid reports whether m is a value of https.mode.
func (m HTTPSMode) Valid() bool { return m == HTTPSModeMITM || m == HTTPSModeTunnel }

// CrawlDelayPolicy is a value of politeness.crawl_delay.
type CrawlDelayPolicy string

// Values of politeness.crawl_delay.
const (
	CrawlDelayHonor  CrawlDelayPolicy = "honor"  // space requests by the robots.txt group's Crawl-delay
	CrawlDelayIgnore CrawlDelayPolicy = "ignore" // disregard Crawl-delay (default_crawl_delay still applies)
)

// Valid reports whether p is a value of politeness.crawl_delay.
func (p CrawlDelayPolicy) Valid() bool { return p == CrawlDelayHonor || p == CrawlDelayIgnore }

// RobotTagsMode is a value of robot_tags.mode.
type RobotTagsMode string

// Values of robot_tags.mode.
const (
	RobotTagsOff      RobotTagsMode = "off"      // neither look at nor act on robot tags
	RobotTagsAnnotate RobotTagsMode = "annotate" // forward, add the index header and an audit record
	RobotTagsEnforce  RobotTagsMode = "enforce"  // replace the response with a 403 and an audit record
)

// Valid reports whether m is a value of robot_tags.mode.
func (m RobotTagsMode) Valid() bool {
	return m == RobotTagsOff || m == RobotTagsAnnotate || m == RobotTagsEnforce
}

// UsageResponse is a value of usage.response.
type UsageResponse string

// Values of usage.response.
const (
	UsageResponseAnnotate UsageResponse = "annotate" // forward, add X-Robotsgate-Usage and an audit record
	UsageResponseEnforce  UsageResponse = "enforce"  // replace the response with a 403 and an audit record
)

// Valid reports whether r is a value of usage.response.
func (r UsageResponse) Valid() bool { return r == UsageResponseAnnotate || r == UsageResponseEnforce }

// UsageUnknown is a value of usage.unknown.
type UsageUnknown string

// Values of usage.unknown.
const (
	UsageUnknownAllow UsageUnknown = "allow" // a declared purpose no preference is stated for is allowed
	UsageUnknownDeny  UsageUnknown = "deny"  // ... is refused
)

// Valid reports whether u is a value of usage.unknown.
func (u UsageUnknown) Valid() bool { return u == UsageUnknownAllow || u == UsageUnknownDeny }
