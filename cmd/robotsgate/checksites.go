package main

import (
	"net/url"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots"
)

// checkSites returns the per-site exceptions (sites:) of the YAML
// configuration file at path, loaded and validated as serve loads it
// (the environment aside); none when path is "".
func checkSites(path string) ([]config.Site, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := config.Load([]string{"-config", path}, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	return cfg.Sites, nil
}

// checkDecide decides the URL u for agent on the rules r under pol as
// the proxy does, per-site exceptions included: a deny exception refuses
// (site-denied), an allow one lets through what the rules refuse
// (site-exception), purposes replace the declared ones. It returns the
// verdict and the exception that applied (Match "" when none).
func checkDecide(r *robots.Robots, agent, u string, pol enforce.UsagePolicy, sites []config.Site) (enforce.Verdict, config.Site) {
	var site config.Site
	if pu, err := url.Parse(u); err == nil && len(sites) > 0 {
		if origin, err := enforce.Origin(pu); err == nil {
			site, _ = config.SiteFor(sites, origin)
		}
	}
	if site.Policy == config.SitePolicyDeny {
		return enforce.Verdict{Reason: answer.ReasonSiteDenied,
			Detail: "the site exception " + site.Match + " denies every request to this site"}, site
	}
	if site.HasPurposes {
		pol.Purposes = site.Purposes
	}
	path := robots.PathParamsQuery(u)
	v := enforce.Verdict{Allowed: true, Reason: enforce.ReasonAllowed}
	if path != "/robots.txt" { // a GET of robots.txt itself, spelled so, is exempt as in the proxy
		v = enforce.RulesVerdict(r, agent, path, pol)
	}
	if site.Policy == config.SitePolicyAllow {
		if !v.Allowed {
			v.Detail = "robots.txt refuses the URL (" + string(v.Reason) + "); allowed by the site exception " + site.Match + ": " + site.Note
		}
		v.Allowed, v.Reason = true, answer.ReasonSiteException
	}
	return v, site
}

// withSite returns r naming the exception site that applied.
func (r checkResult) withSite(site config.Site) checkResult {
	r.Site, r.SiteNote = site.Match, site.Note
	return r
}
