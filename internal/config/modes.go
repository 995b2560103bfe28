package config

// Values of mode.
const (
	ModeEnforce = "enforce" // refuse what robots.txt disallows
	ModeReport  = "report"  // decide and audit, but forward everything
)

// Values of audit.
const (
	AuditBlocked = "blocked" // audit refusals (and report-mode would-be refusals)
	AuditAll     = "all"     // audit every decision
)

// Values of https.mode.
const (
	// HTTPSModeMITM intercepts CONNECT with robotsgate's CA: every request
	// inside the TLS session is decided like a plain HTTP one.
	HTTPSModeMITM = "mitm"
	// HTTPSModeTunnel opens opaque tunnels, deciding per host only.
	HTTPSModeTunnel = "tunnel"
)

// Values of politeness.crawl_delay.
const (
	CrawlDelayHonor  = "honor"  // space requests by the robots.txt group's Crawl-delay
	CrawlDelayIgnore = "ignore" // disregard Crawl-delay (default_crawl_delay still applies)
)

// Values of robot_tags.mode.
const (
	RobotTagsOff      = "off"      // neither look at nor act on robot tags
	RobotTagsAnnotate = "annotate" // forward, add the index header and an audit record
	RobotTagsEnforce  = "enforce"  // replace the response with a 403 and an audit record
)
