package audit

import "time"

// Event is one audit record. Hooks other than the robots decision (CONNECT
// tunnels, politeness pauses, robot tags, ...) fill in what applies to
// them and leave the rest zero; zero fields are omitted from the record.
type Event struct {
	// Kind is "" for the decision on a request, [KindConfigReload] for a
	// reload of the configuration (Reason ok or invalid, Method what asked
	// for it, Detail what changed or why it was refused).
	Kind   string
	Time   time.Time // when it happened; zero means now
	Client string    // client address (host:port)
	// User is the proxy user the request authenticated as (the user name
	// of its credentials; inside an MITM session, its CONNECT's); "" when
	// no credentials are required.
	User string
	// Listener is where the request came in: "proxy" (the proxy port)
	// or "transparent" (a redirected connection); "" for records that are
	// not about a request.
	Listener string
	Method   string
	URL      string
	Origin   string
	Agent    string // the product token decided for; "*" when only the "*" group applied
	Group    string // the robots.txt group that applied
	Rule     string // the deciding rule, e.g. "Disallow: /private"
	Line     int    // the rule's line in robots.txt
	Reason   string // the decision's reason, e.g. "disallowed", "robots-unreachable", "tunnel-unenforced"
	Decision string // DecisionAllowed, DecisionBlocked or DecisionReported
	Mode     string // enforce | report

	RobotsStatus     string        // ok | unavailable | unreachable; "" when robots.txt was not consulted
	RobotsHTTPStatus int           // HTTP status of the robots.txt fetch
	RobotsAge        time.Duration // age of the robots.txt copy in force
	RobotsStale      bool          // the copy used was not fresh
	RobotsStaleWhy   string        // why: an enforce.StaleReason ("revalidating", "unreachable", ...)

	// RobotsSHA256, TDMRepSHA256 and LicenseSHA256 are the SHA-256 (hex)
	// of the robots.txt, tdmrep.json and license documents the decision
	// used ("robots_sha256", ...; license: comma-separated, one per
	// document read); "" when none. robotsgate keeps each document under
	// its hash (robotsgate audit -document).
	RobotsSHA256  string
	TDMRepSHA256  string
	LicenseSHA256 string

	Status int    // HTTP status robotsgate answered or saw, when known
	Detail string // free text for what the fields above do not say

	// AgentOverrideRefused is the agent override header a client sent and
	// robotsgate refused, because an agent is configured and overrides are
	// not allowed (Config.AllowAgentOverride).
	AgentOverrideRefused string

	// Purposes are the declared purposes the decision was made for (nil
	// for none): "purposes", a list, as in answers.
	Purposes []string
	// Usage is the usage preference of every purpose that has one, and
	// of every declared purpose.
	Usage []Usage
	// UsageDisallowed is the declared purposes whose usage preference
	// refused the request (reason usage-disallowed): "usage_disallowed",
	// a list, as in answers.
	UsageDisallowed []string
	// PurposesOverrideRefused is the purposes header a client sent and
	// robotsgate refused (allow_agent_override is off).
	PurposesOverrideRefused string

	// Site is the operator's per-site exception that applied (its
	// match), SiteNote its note.
	Site     string
	SiteNote string

	// ContentUse is the declared content use ("" for none); [SiteUse] the
	// content-use level the site states for the URL (nil: none);
	// ContentUseDisallowed is set when SiteUse refused the request (reason
	// usage-disallowed).
	ContentUse           string
	SiteUse              *SiteUse
	ContentUseDisallowed bool

	// TDM is the TDMRep verdict of the URL, nil when TDMRep was not
	// consulted.
	TDM *TDM

	// SignedKeyID is the keyid of the Web Bot Auth signature robotsgate
	// adds to the request when it forwards it (or added, for a record
	// made after); "" for a request refused before it left, or not
	// signed.
	SignedKeyID string
	// License is the verdict of the site's RSL licenses, nil when they
	// were not consulted.
	License *License
	// Payment is the 402 pay-per-crawl exchange of the request, nil when
	// there was none (payment.go).
	Payment *Payment

	// Volume is the body of a [KindVolume] record, nil in every other.
	Volume *Volume
}

// License is an RSL license verdict in an audit record. It never holds
// a license token.
type License struct {
	State   string // none, permitted, required, prohibited or unknown
	Use     string // the RSL usage that decided, e.g. ai-train
	License string // the license document that decided
	Content string // the url of its <content> that decided
	Server  string // the License Server whose token a required use needs
	Token   string // sent (configured), client (the client's own), missing, http (never sent in clear text); "" when none is needed
	Note    string // why a document gave no terms
}

// TDM is a TDMRep verdict in an audit record.
type TDM struct {
	Reservation string // 1, 0, unset or unknown (tdmrep.json unreadable)
	Source      string // tdmrep.json, header, meta; "" when nothing is declared
	Rule        string // the declaration, e.g. the tdmrep.json rule
	Policy      string // the tdm-policy URL, "" when none
	File        string // the tdmrep.json consulted, with its status
}

// SiteUse is a site's content-use level (Content Signals "use=") in an
// audit record.
type SiteUse struct {
	Level  string // immediate, reference or full
	Source string // content-signal, content-signal-header
	Rule   string // the line or header that states it
	Line   int    // its line in robots.txt; 0 for a response's
}

// KindConfigReload is the [Event.Kind] of a configuration reload.
const KindConfigReload = "config-reload"

// Usage is the usage preference for one purpose in an audit record.
type Usage struct {
	Purpose string // train-ai, search, ai-input, ai-use
	Pref    string // allowed, disallowed or unknown
	Source  string // content-usage, content-signal, content-usage-header, content-signal-header, robot-tag; "" when unknown
	Rule    string // the line that states it
	Line    int    // its line in robots.txt; 0 for a response's
}
