package proxy

import (
	"context"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

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
	d := enforce.Decision{Reason: ReasonSiteDenied, URL: enforce.RedactedURL(u), Agent: agent, Purposes: purposes,
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
	d.Allowed, d.Reason = true, ReasonSiteException
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
	if d.Reason == ReasonSiteDenied {
		return d
	}
	return l.tdm.decide(ctx, u, purposes, d) // TDMRep (tdmrep.go)
}

// DecideWithSites is the decision a request for u would get from the
// proxy under the per-site exceptions sites ([siteDecision]), for a
// caller without a Server ("robotsgate check -fetch").
func DecideWithSites(ctx context.Context, enf *enforce.Enforcer, sites []config.Site, u *url.URL, agent string, o enforce.DecideOptions) enforce.Decision {
	d, _ := siteDecision(sites, u, agent, o, func(o enforce.DecideOptions) enforce.Decision { return enf.Decide(ctx, u, agent, o) })
	return d
}
