package main

import (
	"errors"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
)

// memoryAllowance is what the process may hold besides the robots.txt
// cache: the runtime, the connections in flight and idle, buffers,
// politeness state, the MITM certificate cache, the garbage the
// collector has not freed yet, and the program's own code and data.
const memoryAllowance = 128 << 20

// programPages is the part of [memoryAllowance] that the Go runtime's
// memory limit does not see: the executable's code and read-only data
// mapped from its file, which count in RSS once touched.
const programPages = 16 << 20

// memoryLimit returns the Go soft memory limit serve sets: the robots.txt
// cache's budget (robots.max_cache_mb) plus [memoryAllowance], less the
// [programPages] the runtime does not count, so that RSS stays within
// the budget plus the allowance; ok is false when the operator set
// GOMEMLIMIT, which the runtime applies itself.
func memoryLimit(cfg config.Config, env func(string) string) (limit int64, ok bool) {
	if env("GOMEMLIMIT") != "" {
		return 0, false
	}
	return int64(cfg.Robots.MaxCacheMB)<<20 + memoryAllowance - programPages, true
}

// applyMemoryLimit sets the soft memory limit of [memoryLimit], so that the
// collector works harder as the process nears it rather than letting the
// heap grow to twice the live data, and logs it.
func applyMemoryLimit(cfg config.Config, env func(string) string, log zerolog.Logger) {
	limit, ok := memoryLimit(cfg, env)
	if !ok {
		log.Info().Str("GOMEMLIMIT", env("GOMEMLIMIT")).Msg("memory limit from GOMEMLIMIT")
		return
	}
	debug.SetMemoryLimit(limit)
	log.Info().Int64("limit_mib", limit>>20).Msg("memory limit: robots.max_cache_mb plus an allowance, less the executable's own pages (GOMEMLIMIT overrides)")
}

// gcPercent is the GOGC serve sets when a memory limit is in force and
// the operator did not set GOGC. The live heap of a proxy serving a warm
// cache of a few origins is small, and at the runtime's default of 100
// the collector would run after every few MiB of garbage, each cycle
// scanning every connection's goroutine stacks. A higher percentage lets the heap grow to several times the
// live data between cycles; the memory limit, not GOGC, then bounds it:
// the heap never outgrows robots.max_cache_mb plus the allowance, and the
// collector runs as often as before once the cache nears its budget.
const gcPercent = 400

// applyGCPercent sets [gcPercent] unless GOGC is set or no memory limit
// is in force (GOMEMLIMIT=off, or an unset one): without a limit the heap
// could reach five times the cached robots.txt files. It returns whether
// it set it.
func applyGCPercent(env func(string) string, log zerolog.Logger) bool {
	if env("GOGC") != "" || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return false
	}
	debug.SetGCPercent(gcPercent)
	log.Info().Str("GOGC", strconv.Itoa(gcPercent)).Msg("garbage collector: the heap may grow to several times the live data, within the memory limit (GOGC overrides)")
	return true
}

// cacheStats is what the in-process robots.txt cache reports.
type cacheStats interface {
	Bytes() int64
	Evictions() int64
	Refetches() int64
}

var _ cacheStats = (*enforce.MemoryStore)(nil)

// registerCacheMetrics exports the in-process cache's bytes (as charged
// against robots.max_cache_mb), its evictions and the robots.txt fetches
// they caused.
func registerCacheMetrics(reg prometheus.Registerer, s cacheStats) error {
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "robotsgate_robots_cache_bytes",
			Help: "Memory held by the in-process robots.txt cache, as charged against robots.max_cache_mb."},
			func() float64 { return float64(s.Bytes()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "robotsgate_robots_cache_evictions_total",
			Help: "Entries evicted from the in-process robots.txt cache to keep it within its bounds (least recently used first)."},
			func() float64 { return float64(s.Evictions()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "robotsgate_robots_cache_refetches_total",
			Help: "robots.txt fetches for origins whose entry had been evicted: a sign that the cache bounds are too small."},
			func() float64 { return float64(s.Refetches()) }),
	}
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
