package proxy

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/status"
)

// The live status page of the admin listener: the Board every audit
// record is published to after it is written (Server.record), and what
// the page shows besides (statusInfo): the robots.txt cache and a summary
// of the configuration in force, without its secrets.

// statusInfo is the page's cache state, configuration summary and
// payment budgets.
func (s *Server) statusInfo() status.Info {
	l := s.live.Load()
	cfg := &l.cfg
	var c status.Cache
	if s.cacheStatus != nil {
		c = s.cacheStatus()
	}
	if c.Mode == "" {
		c.Mode = CacheMode(cfg.Cache)
	}
	spend := status.Spends(s.wallet, cfg.Payment.Budgets, userNames(l.acl.Identities()), s.clock.Now()) // payment budgets
	return status.Info{Cache: c, Config: append(configSummary(cfg), fleetState(c)...), Spend: spend}
}

// userNames returns the distinct user names of ids, in order.
func userNames(ids []access.Identity) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id.User) {
			out = append(out, id.User)
		}
	}
	return out
}

// fleetState is the summary's line on the fleet-wide state, with Redis:
// shared by the replicas, or local only (and why).
func fleetState(c status.Cache) []status.Setting {
	switch {
	case c.RedisHealthy == nil:
		return nil
	case *c.RedisHealthy:
		return []status.Setting{{Key: "fleet state", Value: "fleet-wide (Redis)"}}
	case c.Problem != "":
		return []status.Setting{{Key: "fleet state", Value: "local only: " + c.Problem}}
	}
	return []status.Setting{{Key: "fleet state", Value: "local only: Redis does not answer (probed until it does)"}}
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
func configSummary(cfg *config.Config) []status.Setting {
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
	return []status.Setting{
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
