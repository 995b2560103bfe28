package proxy

import (
	"context"
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
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

// siteDenied is the outcome of a request to a site a deny exception
// covers: 403 site-denied before anything is fetched, or, in report mode,
// an audit record "reported" and the request goes on.
func siteDenied(u *url.URL, agent string, st *requestState, site config.Site, report bool) outcome {
	d := enforce.Decision{Reason: ReasonSiteDenied, URL: enforce.RedactedURL(u), Agent: agent, Purposes: st.Purposes,
		Site: site.Match, SiteNote: site.Note,
		Detail: "the operator's site exception " + site.Match + " denies every request to this site; robots.txt was not fetched"}
	d.Origin, _ = enforce.Origin(u)
	st.Decision, st.Decided = d, true
	if report {
		return note(audit.DecisionReported, d)
	}
	return refuse(d)
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
// purposes: the proxy's, per-site exceptions included, without counting
// it as a proxied request.
func (s *Server) decideQuiet(ctx context.Context, u *url.URL, agent string, purposes aipref.Set, use aipref.Use) enforce.Decision {
	l := s.live.Load()
	site, hasSite := siteOf(l.cfg.Sites, u)
	if hasSite && site.Policy == config.SitePolicyDeny {
		return siteDenied(u, agent, &requestState{Purposes: purposes}, site, false).d
	}
	if hasSite && site.HasPurposes {
		purposes = site.Purposes
	}
	d := s.enf.Decide(ctx, u, agent, enforce.DecideOptions{Purposes: purposes, ContentUse: use, Quiet: true, UnknownUsage: l.decide.unknown})
	if hasSite {
		d = applySite(d, site)
	}
	d = l.tdm.decide(ctx, u, purposes, d)    // TDMRep (tdmrep.go)
	return l.lic.decide(ctx, u, purposes, d) // RSL licenses (license.go)
}

// DecideWithSites is the decision a request for u would get from the
// proxy under the per-site exceptions sites, for a caller without a
// Server ("robotsgate check -fetch"): a deny exception refuses before
// anything is fetched, an exception's purposes replace o.Purposes, an
// allow exception lets through what robots.txt refuses.
func DecideWithSites(ctx context.Context, enf *enforce.Enforcer, sites []config.Site, u *url.URL, agent string, o enforce.DecideOptions) enforce.Decision {
	site, hasSite := siteOf(sites, u)
	if hasSite && site.Policy == config.SitePolicyDeny {
		return siteDenied(u, agent, &requestState{Purposes: o.Purposes}, site, false).d
	}
	if hasSite && site.HasPurposes {
		o.Purposes = site.Purposes
	}
	d := enf.Decide(ctx, u, agent, o)
	if hasSite {
		d = applySite(d, site)
	}
	return d
}
