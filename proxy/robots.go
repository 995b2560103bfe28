package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// The robots.txt decision: the step that makes it on a proxied request
// (the decision of [enforce.Enforcer.Decide]) and what its refusal says,
// the operator's per-site exceptions (sites:) it applies, written once
// ([siteDecision]) for the step, tunnel mode ([Server.tunnel]),
// /v1/decision ([Server.decideQuiet]) and check -fetch
// ([DecideWithSites]). The refusal's status and
// Proxy-Status come from the table of reasons (reasons.go), its body
// from decision.go; Server.settle (refuse.go) writes both and the audit
// record.

// robotsStep is the robots.txt step: it picks the agent, strips the
// override header (honoured or not) and asks the Enforcer. In enforce
// mode a refusal is answered with a 403 so that the request never leaves
// (with a 502 when the refusal is really an origin whose certificate
// failed verification: [untrustedRobots]). Refusals, report-mode would-be
// refusals, refused agent overrides and, with audit: all, every decision
// are audited. A client's own GET or HEAD of /robots.txt (spelled so) is
// always allowed.
//
// State: reads and writes the caller (Agent, overrides, Identity: [agentFor],
// declare) and the verdict (Purposes, ContentUse, Decision, Decided)
// ([requestState]).
type robotsStep struct {
	enf         *enforce.Enforcer
	maxURLBytes int // longer URLs are answered 414 undecided
	agents      *access.Agents
	report      bool // mode: report
	auditAll    bool // audit: all
	log         zerolog.Logger
	sites       []config.Site // per-site exceptions ([siteDecision])
	unknownDeny bool          // usage.unknown: deny
}

// decide is the decision of a request for u by agent with the options
// o, made by decide, under this configuration's site exceptions
// ([siteDecision]) and usage.unknown; purposes are those it was decided
// for.
func (rs *robotsStep) decide(u *url.URL, agent string, o enforce.DecideOptions,
	decide func(enforce.DecideOptions) enforce.Decision) (d enforce.Decision, purposes aipref.Set) {
	o.UnknownDeny = rs.unknownDeny
	return siteDecision(rs.sites, u, agent, o, decide)
}

func (rs robotsStep) onRequest(r *http.Request, st *requestState) outcome {
	agent := agentFor(rs.agents, r, st)
	if rs.agents.Header != "" {
		r.Header.Del(rs.agents.Header)
	}
	if o, ok := agentTooLong(r, agent); !ok { // refused undecided (state.go)
		return o
	}
	st.Agent = agent
	if o, ok := declare(rs.agents, r, st); !ok { // purposes: the user's, the configured ones or the header's (state.go)
		return o
	}
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" {
		return outcome{} // not a web URL; the transport refuses it (502)
	}
	if n := urlBytes(r.URL); n > rs.maxURLBytes {
		// Too long to decide at a bounded cost: refused undecided, in both modes.
		return refuse(longURLDecision(r.URL, agent, n, rs.maxURLBytes))
	}

	// Per-site exceptions ([siteDecision]), then robots.txt; a GET or HEAD of
	// /robots.txt itself, spelled so, is always allowed.
	o := enforce.DecideOptions{Purposes: st.Purposes, ContentUse: st.ContentUse, Method: r.Method}
	d, purposes := rs.decide(r.URL, agent, o, func(o enforce.DecideOptions) enforce.Decision {
		return rs.enf.Decide(r.Context(), r.URL, agent, o)
	})
	st.Purposes = purposes
	if d.Reason == enforce.ReasonClientGone {
		// The client left while robots.txt was being fetched: nothing was
		// decided, so nothing is audited or counted, and nothing is sent.
		rs.log.Debug().Str("url", d.URL).Str("origin", d.Origin).Msg("client gone while waiting for robots.txt")
		return outcome{status: http.StatusServiceUnavailable, gone: "robotsgate: the client went away before robots.txt was fetched\n"}
	}
	st.Decision, st.Decided = d, true
	switch {
	case d.Reason == answer.ReasonSiteException: // written permission: always audited
		return note(audit.DecisionAllowed, d)
	case !d.Allowed && !rs.report:
		return refuse(explainRobots(r.URL.Host, d))
	case !d.Allowed:
		return note(audit.DecisionReported, d)
	case rs.auditAll || st.OverrideRefused != "" || st.PurposesRefused != "":
		// A refused agent or purposes override is always audited, whatever the level.
		return note(audit.DecisionAllowed, d)
	}
	return outcome{}
}

// untrustedRobots explains the refusal d when the origin's robots.txt
// could not be fetched because its certificate failed verification: the
// request could not have been forwarded either, and the operator can
// trust the origin's root. It returns "" for every other decision.
func untrustedRobots(host string, d enforce.Decision) string {
	if d.Allowed || d.Reason != enforce.ReasonOriginUnreachable || d.RobotsErrKind != enforce.FetchTLSUntrusted {
		return ""
	}
	return "the certificate of " + host + " failed verification when fetching its robots.txt " +
		"(robotsgate does not connect to unverified servers; if you trust it, add its root CA to https.upstream_roots)"
}

// explainRobots adds to the refusal d of a request to host what an
// untrusted origin certificate means ([untrustedRobots]).
func explainRobots(host string, d enforce.Decision) enforce.Decision {
	if why := untrustedRobots(host, d); why != "" {
		d.Detail = why + ": " + d.Detail
	}
	return d
}

// siteOf returns the exception of sites that covers u's origin
// ([config.SiteFor]), and whether one does.
func siteOf(sites []config.Site, u *url.URL) (config.Site, bool) {
	if len(sites) == 0 {
		return config.Site{}, false
	}
	origin, err := enforce.Origin(u)
	if err != nil {
		return config.Site{}, false
	}
	return config.SiteFor(sites, origin)
}

// siteDecision is the decision of a request for u by agent with the
// options o under the operator's per-site exceptions sites, the one
// place they apply (the robots step, tunnel mode, /v1/decision and
// check -fetch): a deny exception refuses it with reason site-denied
// before decide is called, so that nothing is fetched, robots.txt
// included; an exception's purposes replace o.Purposes; decide makes the
// robots.txt decision, which an allow exception or a crawl_delay then
// amends ([applySite]). purposes are those the request was decided for.
func siteDecision(sites []config.Site, u *url.URL, agent string, o enforce.DecideOptions,
	decide func(enforce.DecideOptions) enforce.Decision) (d enforce.Decision, purposes aipref.Set) {
	site, hasSite := siteOf(sites, u)
	if hasSite && site.Policy == config.SitePolicyDeny {
		return siteDenial(u, agent, o.Purposes, site), o.Purposes
	}
	if hasSite && site.HasPurposes {
		o.Purposes = site.Purposes
	}
	d = decide(o)
	if hasSite {
		d = applySite(d, site)
	}
	return d, o.Purposes
}

// siteDenial is the decision on a request to a site a deny exception
// covers: site-denied, nothing fetched.
func siteDenial(u *url.URL, agent string, purposes aipref.Set, site config.Site) enforce.Decision {
	d := enforce.Decision{Reason: answer.ReasonSiteDenied, URL: enforce.RedactedURL(u), Agent: agent, Purposes: purposes,
		Site: site.Match, SiteNote: site.Note,
		Detail: "the operator's site exception " + site.Match + " denies every request to this site; robots.txt was not fetched"}
	d.Origin, _ = enforce.Origin(u)
	return d
}

// applySite applies the exception site (not a deny) to the decision d
// made for a request to the site: an allow exception lets through what
// robots.txt refuses, with reason site-exception and what robots.txt said
// in the detail; a crawl_delay is a floor on robots.txt's Crawl-delay.
func applySite(d enforce.Decision, site config.Site) enforce.Decision {
	d.Site, d.SiteNote = site.Match, site.Note
	d.CrawlDelay = max(d.CrawlDelay, site.CrawlDelay)
	if site.Policy != config.SitePolicyAllow || d.Reason == enforce.ReasonClientGone {
		return d
	}
	said := "robots.txt allows the URL"
	if !d.Allowed {
		why := string(d.Reason)
		if d.Detail != "" {
			why += ": " + d.Detail
		}
		said = "robots.txt refuses the URL (" + why + ")"
	}
	d.Detail = said + "; forwarded under the operator's site exception " + site.Match + ": " + site.Note
	d.Allowed, d.Reason = true, answer.ReasonSiteException
	return d
}

// decideQuiet is the decision /v1/decision shows for u, agent and
// purposes: the proxy's, per-site exceptions and TDMRep included,
// without counting it as a proxied request.
func (s *Server) decideQuiet(ctx context.Context, u *url.URL, agent string, purposes aipref.Set, use aipref.Use) enforce.Decision {
	l := s.live.Load()
	o := enforce.DecideOptions{Purposes: purposes, ContentUse: use, Quiet: true}
	d, purposes := l.robots.decide(u, agent, o, func(o enforce.DecideOptions) enforce.Decision {
		return s.enf.Decide(ctx, u, agent, o)
	})
	if d.Reason == answer.ReasonSiteDenied {
		return d
	}
	d = l.tdm.decide(ctx, u, purposes, d)    // TDMRep (tdmrep.go)
	return l.lic.decide(ctx, u, purposes, d) // RSL licenses (license.go)
}

// DecideWithSites is the decision a request for u would get from the
// proxy under the per-site exceptions sites ([siteDecision]), for a
// caller without a Server ("robotsgate check -fetch").
func DecideWithSites(ctx context.Context, enf *enforce.Enforcer, sites []config.Site, u *url.URL, agent string, o enforce.DecideOptions) enforce.Decision {
	d, _ := siteDecision(sites, u, agent, o, func(o enforce.DecideOptions) enforce.Decision { return enf.Decide(ctx, u, agent, o) })
	return d
}

// URL length: a URL longer than max_url_bytes is refused 414
// url-too-long before it is decided (the robots step), and its audit
// record keeps only the first KiB of it.

// auditURLBytes is how much of a URL too long to decide an audit record
// keeps, so that such requests cannot fill the audit log either.
const auditURLBytes = 1 << 10

// urlBytes returns the length of u as robotsgate decides it: scheme,
// userinfo, host, path, params and query, percent-encoded as the request
// URL is read (raw non-ASCII octets count three times, as they are
// matched). The path and query are what robots.txt rules are matched
// against; the host and userinfo are counted too, as the client chooses
// them as freely.
func urlBytes(u *url.URL) int {
	n := len(u.Scheme) + len("://") + len(u.Host)
	if u.User != nil {
		n += len(u.User.String()) + 1
	}
	if u.Opaque != "" {
		n += len(u.Opaque)
	} else {
		n += len(u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		n += 1 + len(u.RawQuery)
	}
	return n
}

// longURLDecision is the refusal of a URL of n bytes, more than max: the
// URL and origin it names are cut to [auditURLBytes].
func longURLDecision(u *url.URL, agent string, n, max int) enforce.Decision {
	return enforce.Decision{
		URL: cut(enforce.RedactedURL(u)), Origin: cut(u.Scheme + "://" + u.Host), Agent: agent,
		Reason: answer.ReasonURLTooLong,
		Detail: fmt.Sprintf("the URL has %d bytes, more than max_url_bytes (%d)", n, max),
	}
}

// cut returns s cut to [auditURLBytes].
func cut(s string) string {
	if len(s) > auditURLBytes {
		return s[:auditURLBytes] + "..."
	}
	return s
}
