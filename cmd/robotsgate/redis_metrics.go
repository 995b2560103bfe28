package main

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// redisHealth is what the Redis layer (the Store of [redisfleet.Redis]) reports.
type redisHealth interface {
	Healthy() bool
	Fallbacks() uint64
}

// registerRedisMetrics exports the state of the shared Redis layer:
// robotsgate_redis_up (1 while Redis is used, 0 while robotsgate answers
// locally) and robotsgate_redis_fallbacks_total (calls answered locally
// because Redis was down, failed or slow).
func registerRedisMetrics(reg prometheus.Registerer, h redisHealth) error {
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "robotsgate_redis_up",
		Help: "1 while the shared Redis is in use, 0 while robotsgate falls back to local state.",
	}, func() float64 {
		if h.Healthy() {
			return 1
		}
		return 0
	})
	fallbacks := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "robotsgate_redis_fallbacks_total",
		Help: "Calls answered from local state because Redis was down, failed or was slow.",
	}, func() float64 { return float64(h.Fallbacks()) })
	var errs []error
	for _, c := range []prometheus.Collector{up, fallbacks} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("redis metrics: %w", err)
	}
	return nil
}
