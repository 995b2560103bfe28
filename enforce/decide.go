package enforce

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Decide returns the decision on fetching u as the crawler whose product
// token is agent ("" when none is known: only the "*" group applies). It
// fetches the origin's robots.txt when no usable copy is cached;
// concurrent callers for one origin share a single fetch. Decide never
// returns an error: a failure to learn the rules is itself a decision
// ([ReasonRobotsUnreachable]).
//
// Stale while revalidate: when the cached entry expired at most
// [FetchTimeout] ago and holds a good robots.txt (from its latest fetch, or
// an earlier one kept beside a failed fetch) that is within the
// UnreachableWindow, Decide decides on it at once and starts one
// background re-fetch for the origin (detached from ctx, bounded by
// FetchTimeout); later requests use its result. Such a decision has
// RobotsStale set ([StaleRevalidating]). Otherwise (nothing cached, an
// expired 4xx, an unreachable origin with no good copy, an entry expired
// for longer than FetchTimeout) Decide waits for the fetch, which it
// shares with the other callers for the origin. A decision made on a last
// good copy because the origin was unreachable has RobotsStale set
// ([StaleUnreachable]).
//
// The rules are matched against u's path, params and query as sent
// (u.RequestURI()). When the path may be read by an origin as another
// path (dot segments, also percent-encoded; repeated slashes; escaped
// reserved characters such as %2F; path parameters ";x"; backslashes, raw
// or %5C), those other spellings are decided too (see spellings): if one
// disallows, the disallowing decision is returned, with a Detail naming
// the normalised path. Decision.URL is u without its userinfo (user
// name and password), which must not reach audit logs or 403 bodies.
//
// A GET or HEAD of /robots.txt itself (exactly that, without a query) is
// always allowed and fetches nothing (see [isRobotsTxt]). If ctx ends while Decide waits for
// a fetch, the decision is [ReasonClientGone] (not allowed, and not a
// robots.txt decision); the fetch itself goes on for the other callers.
//
// For a URL Allow/Disallow permits, the usage preferences robots.txt
// states (Content-Usage, Content-Signal) are reported in [Decision.Usage];
// when they disallow a purpose of o.Purposes (or state none for it
// while o.UnknownDeny is set) the decision is
// [ReasonUsageDisallowed] (see [RulesVerdict]).
func (e *Enforcer) Decide(ctx context.Context, u *url.URL, agent string, o DecideOptions) Decision {
	return e.decideURL(ctx, u, agent, o)
}

// DecideOptions are the settings of one decision that may differ from
// request to request.
type DecideOptions struct {
	// Purposes are the crawler's declared purposes; none: usage
	// preferences are reported and never refuse.
	Purposes aipref.Set
	// ContentUse is the crawler's declared content use; UseUnknown: levels
	// are reported and never refuse.
	ContentUse aipref.Use
	// Quiet: the decision is not a proxied request but a query (the admin
	// API): the cache lookup is not reported to [Hooks.CacheLookup]. A
	// robots.txt fetch it causes is still reported to [Hooks.Fetched]: it is
	// real traffic to the origin, which proxied requests may be sharing.
	Quiet bool
	// Method is the request's method; "" means GET. Only a GET or HEAD of
	// /robots.txt is exempt from the rules.
	Method string
	// UnknownDeny refuses a URL for which no usage preference is known
	// for a declared purpose (usage.unknown: deny).
	UnknownDeny bool
}

func (e *Enforcer) decideURL(ctx context.Context, u *url.URL, agent string, o DecideOptions) Decision {
	origin, err := decidableOrigin(u)
	if err != nil {
		reason := ReasonInvalidURL
		if errors.Is(err, ErrInvalidHost) {
			reason = ReasonInvalidHost
		}
		return Decision{Reason: reason, URL: RedactedURL(u), Agent: agent, Detail: err.Error()}
	}
	d := Decision{Origin: origin, URL: RedactedURL(u), Agent: agent, Purposes: o.Purposes, ContentUse: o.ContentUse}
	now := e.clock.Now()

	key := RobotsKey(origin, addressOf(ctx)) // as served where the request goes (address.go)
	if isRobotsTxt(u, o.Method) {
		d.Allowed, d.Reason = true, ReasonRobotsTxt
		if en, ok := e.store.Get(ctx, key); ok {
			e.describe(&d, en, now, false)
		}
		return d
	}

	en, ok := e.store.Get(ctx, key)
	fresh := ok && now.Before(en.Expires)
	if f := e.hooks.CacheLookup; f != nil && !o.Quiet {
		f(origin, fresh)
	}
	var stale StaleReason
	if !fresh {
		if ok && e.servableStale(en, now) {
			e.revalidate(ctx, key)
			stale = StaleRevalidating
		} else {
			got, err := e.refresh(ctx, key)
			switch {
			case err == nil:
				en = got
				now = e.clock.Now()
			case ctx.Err() != nil:
				d.Reason = ReasonClientGone
				d.Detail = "the client stopped waiting for robots.txt (" + context.Cause(ctx).Error() + "): nothing decided"
				return d
			case en == nil:
				d.Reason = ReasonRobotsUnreachable
				d.Detail = "robots.txt could not be fetched: " + err.Error() + "; all URLs disallowed"
				return d
			default: // fall back on the expired copy
				stale = StaleFetchFailed
			}
		}
	}
	e.decide(&d, en, now, u, UsagePolicy{Purposes: o.Purposes, UnknownDeny: o.UnknownDeny, ContentUse: o.ContentUse})
	if stale != "" && !d.RobotsStale {
		d.RobotsStale, d.RobotsStaleReason = true, stale
	}
	return d
}

// decidableOrigin is [Origin] of u, or an error for a URL with an opaque
// path ("http:private", its host from elsewhere: a Host header): it is
// sent as the request target "private", which no RFC 9309 path matches
// and a lenient server reads as "/private".
func decidableOrigin(u *url.URL) (string, error) {
	origin, err := Origin(u)
	if err == nil && u.Opaque != "" && !strings.HasPrefix(u.Opaque, "/") {
		err = fmt.Errorf("%w: %q has an opaque path, not one starting with \"/\"", errNoOrigin, RedactedURL(u))
	}
	return origin, err
}

// isRobotsTxt reports whether a request of method for u asks for the
// robots.txt file itself: a GET or HEAD ("" is GET) of exactly
// "/robots.txt", with no query. That is the one request exempt from the
// rules. Any other spelling a server might map to the same file
// ("/%72obots.txt", "/robots%2Etxt", "/ROBOTS.TXT", "/robots.txt?x",
// "/robots.txt;x") and any other method (PUT, DELETE, POST) is decided by
// the rules like any other path (the rules alone: robots'
// MatchUsageRules leaves out RFC 9309's implicit allowance), so that no
// variant opens a path by accident.
func isRobotsTxt(u *url.URL, method string) bool {
	if method != "" && method != "GET" && method != "HEAD" {
		return false
	}
	// u.RequestURI() == "/robots.txt", without building it: a RawPath is
	// set only when the path was sent spelt otherwise (/%72obots.txt).
	return u.Opaque == "" && u.Path == "/robots.txt" && u.RawPath == "" && u.RawQuery == "" && !u.ForceQuery
}

// decide fills d from en for the URL u under the usage policy p.
func (e *Enforcer) decide(d *Decision, en *Entry, now time.Time, u *url.URL, p UsagePolicy) {
	rules := e.describe(d, en, now, true)
	if rules == nil {
		if d.Reason == ReasonRobotsUnavailable && p.UnknownDeny && p.Purposes != 0 {
			// No robots.txt states a usage preference.
			v := Verdict{Allowed: true}
			applyUsage(&v, p, &spelled{}, " (no robots.txt in force)")
			d.Allowed, d.Reason, d.Detail, d.UsageBlocked = v.Allowed, v.Reason, v.Detail, v.UsageBlocked
		}
		return
	}
	var path string
	if u.Opaque != "" {
		path = robots.PathParamsQuery(u.String())
	} else {
		path = u.RequestURI()
	}
	v := RulesVerdict(rules, d.Agent, path, p)
	if v.Detail != "" {
		d.Detail = v.Detail
	}
	d.Allowed, d.Reason, d.Group = v.Allowed, v.Reason, v.Group
	d.Usage, d.UsageBlocked = v.Usage, v.UsageBlocked
	d.SiteUse, d.ContentUseBlocked = v.SiteUse, v.ContentUseBlocked
	d.CrawlDelay = rules.CrawlDelay(d.Agent) // politeness paces with the group's Crawl-delay
	if v.Line != 0 {
		d.Rule, d.Line = v.Rule, v.Line
	}
}

// describe fills d's Robots fields from en and, when decide is set, the
// decision of the cases that need no rule matching (then it returns nil);
// it returns the robots.txt whose rules decide otherwise.
func (e *Enforcer) describe(d *Decision, en *Entry, now time.Time, decide bool) *robots.Robots {
	d.RobotsStatus = en.Result.Status
	d.RobotsHTTPStatus = en.Result.HTTPStatus
	d.RobotsErrKind = en.Result.ErrKind
	d.RobotsFetchedAt = en.FetchedAt
	d.RobotsAge = now.Sub(en.FetchedAt)
	switch en.Result.Status {
	case StatusOK:
		if en.Parsed != nil {
			d.RobotsSHA256 = e.used(en)
			return en.Parsed
		}
	case StatusUnavailable:
		if decide {
			d.Allowed, d.Reason = true, ReasonRobotsUnavailable
			d.Detail = "no robots.txt" + paren(en.Result.Err) + ": all URLs allowed"
		}
		return nil
	}
	// Unreachable (or an entry without rules).
	if !en.UnreachableSince.IsZero() && now.Sub(en.UnreachableSince) > e.window && !refusedDestination(en.Result) {
		if decide {
			d.Allowed, d.Reason = true, ReasonRobotsUnavailable
			d.Detail = "robots.txt unreachable for longer than " + e.window.String() +
				paren(en.Result.Err) + ": treated as absent, all URLs allowed"
		}
		return nil
	}
	if en.Good != nil && en.Parsed != nil {
		d.RobotsStale, d.RobotsStaleReason = true, StaleUnreachable
		d.RobotsFetchedAt = en.GoodAt
		d.RobotsAge = now.Sub(en.GoodAt)
		d.RobotsSHA256 = e.used(en)
		return en.Parsed
	}
	if decide {
		unreachable(d, en, now)
	}
	return nil
}

// RetryClause ends the Detail of a refusal for an unreachable robots.txt,
// followed by how long until it is fetched again: words for a running
// proxy, which a one-shot command ("check -fetch") replaces.
const RetryClause = "; robots.txt is tried again in "

// unreachable fills d with the refusal of an origin whose robots.txt the
// entry en says could not be fetched: [ReasonOriginUnreachable] when the
// origin itself was not reached, [ReasonRobotsUnreachable] otherwise, with when
// robots.txt is fetched again (RetryAfter).
func unreachable(d *Decision, en *Entry, now time.Time) {
	d.Allowed, d.Reason = false, ReasonRobotsUnreachable
	retry := ""
	if wait := en.Expires.Sub(now); wait > 0 {
		d.RetryAfter = wait
		retry = RetryClause + wait.Round(time.Second).String()
	}
	if refusedDestination(en.Result) {
		d.Reason = ReasonDestinationPrivate
		d.Detail = "robots.txt led to an address robotsgate may not connect to" + paren(en.Result.Err) +
			": all URLs disallowed" + retry
		return
	}
	if en.Result.ErrKind.NotReached() && onOrigin(en.Result.FinalURL, en.Key.Origin()) {
		d.Reason = ReasonOriginUnreachable
		d.Detail = "the origin could not be reached to fetch its robots.txt" + paren(en.Result.Err) +
			": the request is not forwarded" + retry
		return
	}
	d.Detail = "robots.txt unreachable" + paren(en.Result.Err) + ": all URLs disallowed" + retry
}

// paren returns " (s)", or "" when s is empty.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// onOrigin reports whether the fetched URL u ("" when unknown) is on
// origin: a failure after a redirect to another origin says nothing
// about whether origin can be reached.
func onOrigin(u, origin string) bool {
	return u == "" || strings.HasPrefix(u, origin+"/")
}
