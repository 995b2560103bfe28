package status

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
)

// The page's summary of the configuration in force: what an operator
// checks first, without secrets, and the fleet-wide state of the cache.

// Summary is the summary of cfg the page shows ([configSummary]) and the
// line on the fleet-wide state of cache c ([fleetState]).
func Summary(cfg *config.Config, c Cache) []Setting {
	return append(configSummary(cfg), fleetState(c)...)
}

// fleetState is the summary's line on the fleet-wide state, with Redis:
// shared by the replicas, or local only (and why).
func fleetState(c Cache) []Setting {
	switch {
	case c.RedisHealthy == nil:
		return nil
	case *c.RedisHealthy:
		return []Setting{{Key: "fleet state", Value: "fleet-wide (Redis)"}}
	case c.Problem != "":
		return []Setting{{Key: "fleet state", Value: "local only: " + c.Problem}}
	}
	return []Setting{{Key: "fleet state", Value: "local only: Redis does not answer (probed until it does)"}}
}

// CacheMode describes the cache setting without its credentials:
// "memory", or the Redis URL's scheme and hosts (no user, password, path
// or query).
func CacheMode(cache string) string {
	if cache == "memory" || cache == "" {
		return "memory"
	}
	u, err := url.Parse(cache)
	if err != nil || u.Scheme == "" {
		return "redis (address not shown)"
	}
	return u.Scheme + "://" + u.Host
}

// configSummary is the summary of cfg the status page shows: what an
// operator checks first, and for secrets only whether they are set.
func configSummary(cfg *config.Config) []Setting {
	or := func(v, none string) string {
		if v == "" {
			return none
		}
		return v
	}
	set := func(b bool) string {
		if b {
			return "set"
		}
		return "not set"
	}
	upstream := "direct"
	if cfg.UpstreamProxy != nil {
		upstream = cfg.UpstreamProxy.Scheme + "://" + cfg.UpstreamProxy.Host
	}
	auth := fmt.Sprintf("%d credential(s)%s, %d client network(s)", len(cfg.Auth.Credentials),
		map[bool]string{true: " + file", false: ""}[cfg.Auth.CredentialsFile != ""], len(cfg.Auth.AllowCIDRs))
	if cfg.Auth.AllowOpen {
		auth += ", allow_open"
	}
	return []Setting{
		{Key: "listen", Value: cfg.Listen},
		{Key: "admin_listen", Value: or(cfg.AdminListen, "the proxy port")},
		{Key: "transparent.listen", Value: or(cfg.Transparent.Listen, "off")},
		{Key: "mode", Value: string(cfg.Mode)},
		{Key: "agent", Value: or(cfg.Agent, "from each request's User-Agent")},
		{Key: "purposes", Value: or(strings.Join(cfg.Purposes.Names(), ","), "none")},
		{Key: "content_use", Value: or(cfg.ContentUse.String(), "none")},
		{Key: "audit", Value: string(cfg.Audit)},
		{Key: "audit_log", Value: map[bool]string{true: "standard output", false: cfg.AuditLog}[cfg.AuditLog == "-"]},
		{Key: "https.mode", Value: string(cfg.HTTPS.Mode)},
		{Key: "robots.ttl", Value: cfg.Robots.TTL.String()},
		{Key: "robots.max_entries", Value: strconv.Itoa(cfg.Robots.MaxEntries)},
		{Key: "robots.max_cache_mb", Value: strconv.Itoa(cfg.Robots.MaxCacheMB)},
		{Key: "robot_tags.mode", Value: string(cfg.RobotTags.Mode)},
		{Key: "tdmrep.mode", Value: string(cfg.TDMRep.Mode)},
		{Key: "politeness.crawl_delay", Value: string(cfg.Politeness.CrawlDelay)},
		{Key: "cache", Value: CacheMode(cfg.Cache)},
		{Key: "upstream_proxy", Value: upstream},
		{Key: "auth", Value: auth},
		{Key: "admin_token", Value: set(cfg.AdminToken != "")},
		{Key: "sites", Value: strconv.Itoa(len(cfg.Sites)) + " exception(s)"},
	}
}
