// Package enforce decides, per request, whether robotsgate lets a URL
// through under the origin's robots.txt: it fetches and caches each
// origin's robots.txt (RFC 9309 §2.3 status rules, redirects, size limit,
// timeouts) and asks package [github.com/robotsgate/robotsgate/robots] for
// the rules' answer. Politeness (crawl-delay pacing, pauses after 503 and
// 429) is package
// [github.com/robotsgate/robotsgate/enforce/politeness]'s.
//
// Its edges are small interfaces ([Fetcher], [Store], [Clock]) so that
// tests can drive time and faults and a Redis store
// ([github.com/robotsgate/robotsgate/enforce/redisfleet]) can replace the
// in-memory one.
package enforce

import (
	"context"
	"errors"
	"time"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// Clock tells the time and waits. Tests inject a fake one
// ([enforcetest.Clock]) so that no test sleeps.
type Clock interface {
	Now() time.Time
	// After is [time.After] on this clock.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the Clock of the real world.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Status classifies a robots.txt fetch result as RFC 9309 §2.3.1 does.
type Status string

const (
	// StatusOK: a 2xx response; its body is the robots.txt.
	StatusOK Status = "ok"
	// StatusUnavailable: 4xx, or too many redirects; no robots.txt, every
	// URL is allowed.
	StatusUnavailable Status = "unavailable"
	// StatusUnreachable: 429, 5xx, timeouts, DNS or connection errors;
	// every URL is disallowed (unless an earlier copy is still usable).
	StatusUnreachable Status = "unreachable"
)

// FetchResult is what a Fetcher got for one origin's /robots.txt.
type FetchResult struct {
	Status     Status
	HTTPStatus int            // final HTTP status, 0 when no response came
	Body       []byte         // at most the fetcher's size limit; only for StatusOK
	Truncated  bool           // the body was longer than the limit
	MaxAge     time.Duration  // Cache-Control max-age of the response, 0 when absent
	HasMaxAge  bool           // the response had a valid max-age (which may be 0)
	FinalURL   string         // the URL after redirects
	Err        string         // why the fetch failed, "" when it did not
	ErrKind    FetchErrorKind // the kind of Err, "" when the fetch did not fail

	// ETag and LastModified are the validators of a [StatusOK] response
	// (revalidate.go); "" when it sent none.
	ETag         string
	LastModified string
	// NoCache is set when the response's Cache-Control says no-store or
	// no-cache: it is kept only for the Enforcer's MinTTL.
	NoCache bool
	// NotModified is set on a 304 answering a conditional fetch: Status
	// is [StatusOK], there is no Body, and the Enforcer keeps its copy.
	NotModified bool
	// SHA256 is the lower-case hex SHA-256 of Body, set by the Enforcer
	// once per fetched body (documents.go); "" when there is no body.
	SHA256 string
}

// Fetcher fetches the robots.txt of an origin ("scheme://host[:port]").
// It must honour ctx and never return a result with an empty Status.
type Fetcher interface {
	Fetch(ctx context.Context, origin string) FetchResult
}

// Entry is the cached state of one policy document: an origin's
// robots.txt, or the tdmrep.json or license document Key names. Entries
// are immutable once stored: a change makes a new Entry.
type Entry struct {
	// Key names the document (and is the key the entry is stored under).
	Key Key
	// Result is the latest fetch result.
	Result FetchResult
	// FetchedAt is when Result was fetched.
	FetchedAt time.Time
	// Expires is when the entry must be re-fetched (fresh until).
	Expires time.Time
	// Good is the last [StatusOK] result when Result is a failure and an
	// earlier copy is still within the unreachable window; nil otherwise.
	Good *FetchResult
	// GoodAt is when Good was fetched.
	GoodAt time.Time
	// Failures counts consecutive unreachable fetches (drives retry backoff).
	Failures int
	// UnreachableSince is when the current streak of unreachable fetches
	// began (the time of its first failed fetch); zero when Result is not
	// [StatusUnreachable]. An origin unreachable for longer than the
	// Enforcer's UnreachableWindow is treated as having no robots.txt.
	UnreachableSince time.Time

	// Parsed is the robots.txt in force (from Result, or Good when Result
	// failed); nil when there is none. Stores that serialise entries store
	// the bodies and rebuild Parsed with Rebuild on load.
	Parsed *robots.Robots

	// TDM is, for the entry of an origin's tdmrep.json ([DocTDMRep]), its
	// rules in force, from the same body as Parsed would be; TDMErr why
	// that body gives none ([tdmrep.ErrInvalid], [tdmrep.ErrTooManyRules]).
	// Rebuild sets both.
	TDM    *tdmrep.File
	TDMErr error

	// License is, for the entry of an RSL license document ([DocLicense]),
	// the document in force; LicenseErr why its body gives none. Rebuild
	// sets both.
	License    *rsl.Document
	LicenseErr error
}

// Rebuild sets e.Parsed from the stored bodies, and the hashes of those
// bodies that have none ([FetchResult.SHA256]), reading at most maxBytes
// of them (maxBytes <= 0 means [robots.DefaultMaxBytes]): from the body of
// Result when it is [StatusOK], else from that of Good when Good is set; nil
// otherwise. Stores that serialise entries (every field but Parsed)
// call it once on a loaded entry, before handing it out: entries are
// shared and must not change afterwards.
func (e *Entry) Rebuild(maxBytes int) {
	hashBody(&e.Result)
	hashBody(e.Good)
	switch e.Key.Doc() {
	case DocLicense:
		e.rebuildLicense()
		return
	case DocTDMRep:
		e.rebuildTDM()
		return
	}
	switch {
	case e.Result.Status == StatusOK:
		e.Parsed = parseShared(&e.Result, maxBytes)
	case e.Good != nil:
		e.Parsed = parseShared(e.Good, maxBytes)
	default:
		e.Parsed = nil
	}
}

// parseShared parses r.Body, reading at most maxBytes of it, and, when
// the whole body was read, has r.Body share the parsed file's copy of it
// ([robots.Robots.Body]) so that an entry holds its body once.
func parseShared(r *FetchResult, maxBytes int) *robots.Robots {
	p := robots.ParseLimit(r.Body, maxBytes)
	if b := p.Body(); len(b) == len(r.Body) && len(b) > 0 {
		r.Body = b
	}
	return p
}

// Coordinator is implemented by Stores shared by several processes: Once runs fetch in at most one
// process at a time per key and lets the others wait for (and return) its stored result.
//
// The Enforcer calls Once from inside its per-process single flight, so
// each process calls it at most once per key at a time. The fetch
// function it passes first re-reads the Store and returns a fresh entry
// found there without fetching; otherwise it fetches, stores the new
// entry ([Store.Set]) and returns it. So an implementation that merely
// serialises calls per key across the fleet (a lock held while fetch
// runs) is correct, and so is one that lets the holder call fetch and
// the others return the entry it stored. Once must honour ctx. When Once
// returns an error the Enforcer fetches locally instead.
type Coordinator interface {
	Once(ctx context.Context, key Key, fetch func(ctx context.Context, st Store) *Entry) (*Entry, error)
}

// ErrCoordinatorUnavailable is returned (wrapped) by a Coordinator's Once
// when its shared backend is down. The Enforcer then fetches locally
// without logging each time: the Coordinator reports the outage itself.
var ErrCoordinatorUnavailable = errors.New("enforce: shared fetch coordination unavailable")

// Store keeps Entries by [Key]. Implementations must be safe for
// concurrent use; those that keep entries under a string keep them
// under [Key.String], whose form is the one place a key is spelled. An entry must be kept at least until keep has passed
// (longer than Expires, so a stale copy can serve while an origin is
// unreachable), except that a Store bounded in size may evict entries
// earlier ([MemoryStore] drops those least recently used): the evicted
// document is then fetched again.
type Store interface {
	Get(ctx context.Context, key Key) (*Entry, bool)
	Set(ctx context.Context, key Key, e *Entry, keep time.Duration)
	Delete(ctx context.Context, key Key)
}

// Reason says why a Decision went the way it did. enforce defines the
// robots.txt reasons; politeness and proxy define the reasons of their
// own refusals with this type.
type Reason string

const (
	ReasonAllowed           Reason = "allowed"            // no rule, or an Allow rule, matched
	ReasonDisallowed        Reason = "disallowed"         // a Disallow rule matched
	ReasonRobotsTxt         Reason = "robots-txt"         // /robots.txt itself is always allowed
	ReasonRobotsUnavailable Reason = "robots-unavailable" // 4xx (or too many redirects): all allowed
	ReasonRobotsUnreachable Reason = "robots-unreachable" // robots.txt could not be fetched: all disallowed
	ReasonInvalidURL        Reason = "invalid-url"        // the URL has no origin (no scheme or host): refused
	// ReasonInvalidHost: the URL's host cannot be mapped to one canonical
	// name or address (invalid IDNA, characters no host name holds, empty
	// labels, an IPv4 shorthand; see [CanonicalHost]): refused, never fetched.
	ReasonInvalidHost Reason = "invalid-host"
	// ReasonOriginUnreachable: robots.txt could not be fetched because the
	// origin itself could not be reached (DNS, connection refused or
	// reset, timeout, TLS): all disallowed, retried soon (RetryAfter).
	ReasonOriginUnreachable Reason = "origin-unreachable"
	// ReasonClientGone: the caller's ctx ended while it waited for the
	// robots.txt fetch (the client disconnected). Not a robots.txt
	// verdict: the request is not sent, and there is nobody to refuse.
	ReasonClientGone Reason = "client-gone"
)

// StaleReason says why a Decision used a robots.txt copy that is not
// fresh.
type StaleReason string

const (
	// StaleRevalidating: the copy expired at most [FetchTimeout] ago and
	// is being re-fetched; it decided meanwhile.
	StaleRevalidating StaleReason = "revalidating"
	// StaleUnreachable: the latest fetch found the origin unreachable;
	// the last good copy decided (RFC 9309 §2.4).
	StaleUnreachable StaleReason = "unreachable"
	// StaleFetchFailed: the copy expired and its re-fetch ended without a
	// result (an internal error); the expired copy decided.
	StaleFetchFailed StaleReason = "fetch-failed"
)

// Decision is the verdict for one request, with everything a 403 body,
// an audit record or the admin API needs to explain it.
type Decision struct {
	// Reason says why; Allowed (below, with the other small fields)
	// whether the request may go.
	Reason Reason
	Origin string
	URL    string
	Agent  string // the product token decided for ("" means only "*" applies)
	Group  string // the group that applied ("*" for the default group)
	Rule   string // the deciding rule, e.g. "Disallow: /private"; "" when none
	Line   int    // the rule's line in robots.txt; 0 when none

	// Detail explains a verdict not made by a rule in words, e.g.
	// "robots.txt unreachable (HTTP 503): all URLs disallowed"; "" when a
	// rule (or no rule) of a robots.txt decided, except that a rule that
	// matched only the normalised spelling of the path ("/a/../private"
	// as "/private") is explained by naming that path.
	Detail string

	// RobotsStatus and RobotsHTTPStatus describe the latest fetch of the
	// origin's robots.txt (zero when none was needed, e.g. for
	// /robots.txt itself with nothing cached).
	RobotsStatus     Status
	RobotsHTTPStatus int
	// RobotsErrKind is the kind of the latest fetch's failure, "" when
	// it did not fail.
	RobotsErrKind FetchErrorKind
	// RobotsFetchedAt and RobotsAge describe the copy the verdict used:
	// the last good copy when RobotsStaleReason is [StaleUnreachable], else
	// the latest fetch.
	RobotsFetchedAt time.Time
	RobotsAge       time.Duration
	// RobotsStaleReason says why the verdict used a copy that is not
	// fresh (RobotsStale, below, is then set).
	RobotsStaleReason StaleReason
	// RobotsSHA256 is the hash of the robots.txt whose rules decided
	// (documents.go); "" when none did.
	RobotsSHA256 string

	// RetryAfter is set for refusals that should be retried (paused,
	// queue full, robots.txt unreachable: when it is fetched again).
	RetryAfter time.Duration

	// Usage is the usage preferences robots.txt states for the URL, for
	// every purpose, declared or not (for audit and annotation); zero
	// when Allow/Disallow refuses the URL or no robots.txt decided.
	Usage Usage
	// SiteUse is the content-use level robots.txt states for the URL
	// (reported whether or not one is declared).
	SiteUse robots.UseVerdict
	// Purposes are the crawler's declared purposes the verdict was made
	// for; UsageBlocked those that refused the URL (Reason
	// [ReasonUsageDisallowed]), empty otherwise. ContentUse is the
	// crawler's declared content use (content_use), UseUnknown when it
	// declared none; ContentUseBlocked is set when SiteUse is below
	// ContentUse (Reason [ReasonUsageDisallowed]). (These small fields
	// sit together: the Decision is part of every request's state.)
	Purposes          aipref.Set
	UsageBlocked      aipref.Set
	ContentUse        aipref.Use
	ContentUseBlocked bool
	// RobotsStale is set when the verdict used a copy that is not fresh;
	// RobotsStaleReason says why.
	RobotsStale bool
	// Allowed says the request may go.
	Allowed bool

	// TDM is the TDMRep verdict of the URL ([Enforcer.TDMRep], and the
	// response's header and meta); zero when TDMRep was not consulted.
	TDM TDMVerdict
	// License is the verdict of the site's RSL licenses
	// ([Enforcer.Licenses]); zero when they were not consulted.
	License LicenseVerdict

	// CrawlDelay is the Crawl-delay of the group that applied (as parsed,
	// not clamped); 0 when the group states none or no robots.txt is in
	// force. Politeness paces the origin with it.
	CrawlDelay time.Duration

	// Site is the pattern of the operator's per-site exception that
	// applied (an origin, a host or "*." and a domain), "" when none;
	// SiteNote its note. Set by the proxy, not by Decide.
	Site     string
	SiteNote string
}
