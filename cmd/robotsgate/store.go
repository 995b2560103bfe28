package main

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/enforce/redisfleet"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/proxy/status"
)

// cacheState is the robots.txt cache that cache names and the politeness
// state that goes with it: in memory (pacer and pauses nil: the proxy's
// own) or shared by the replicas on one Redis, falling back to local
// state while it is down.
type cacheState struct {
	store  enforce.Store
	pacer  politeness.Pacer
	pauses politeness.Pauses
	redis  *redisfleet.Redis // nil in memory
	local  *enforce.MemoryStore
	log    zerolog.Logger
}

// newStore returns the cache state of cfg.
func newStore(ctx context.Context, cfg config.Config, log zerolog.Logger) (*cacheState, error) {
	local := enforce.NewMemoryStore(cfg.Robots.MaxEntries, int64(cfg.Robots.MaxCacheMB)<<20)
	if cfg.Cache == "memory" {
		return &cacheState{store: local, local: local, log: log}, nil
	}
	redisfleet.SetRedisClientLog(log)
	r, err := redisfleet.New(ctx, cfg.Cache, redisfleet.Options{
		Log:      log.With().Str("component", "redis").Logger(),
		MaxBytes: cfg.Robots.MaxBytes,
		Local:    local,
	})
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &cacheState{store: r.Store(), pacer: r.Pacer(), pauses: r.Pauses(), redis: r, local: local, log: log}, nil
}

// wallet is the payment wallet of the cache: fleet-wide on Redis, else
// nil (the proxy's own, per replica).
func (c *cacheState) wallet() payment.Wallet {
	if c.redis == nil {
		return nil
	}
	return c.redis.Wallet()
}

// export registers the cache's gauges with metrics: the entry count and,
// with Redis, its health.
func (c *cacheState) export(metrics *metrics.Metrics, log zerolog.Logger) {
	if l, ok := c.store.(interface{ Len() int }); ok {
		metrics.CacheEntriesFunc(l.Len)
	}
	if err := registerCacheMetrics(metrics.Registry(), c.local); err != nil { // memory.go
		log.Warn().Err(err).Msg("cache metrics not exported")
	}
	if h, ok := c.store.(redisHealth); ok {
		if err := registerRedisMetrics(metrics.Registry(), h); err != nil {
			log.Warn().Err(err).Msg("redis metrics not exported")
		}
	}
}

// close releases the Redis connection, if any; it is a closer.
func (c *cacheState) close(context.Context) int {
	if c.redis != nil {
		if err := c.redis.Close(); err != nil {
			c.log.Warn().Err(err).Msg("closing redis")
		}
	}
	return 0
}

// status is the cache's state for the status page: the in-process
// cache's size and evictions, and with Redis whether it is reachable.
func (c *cacheState) status() status.Cache {
	s := status.Cache{Entries: c.local.Len(), Bytes: c.local.Bytes(), Evictions: c.local.Evictions()}
	if h, ok := c.store.(redisHealth); ok {
		up := h.Healthy()
		s.RedisHealthy = &up
	}
	if c.redis != nil {
		s.Problem = c.redis.Problem()
	}
	return s
}
