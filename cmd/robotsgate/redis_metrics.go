package main

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/enforce/redisfleet"
)

// redisHealth is what the Redis layer (the Store of [redisfleet.Redis]) reports.
type redisHealth interface {
	Healthy() bool
	Fallbacks() uint64
	Switches() (toLocal, toFleet uint64)
	Topology() redisfleet.Topology
}

// registerRedisMetrics exports the state of the shared Redis layer:
// robotsgate_redis_up (1 while Redis is used, 0 while robotsgate answers
// locally), robotsgate_redis_mode{mode="fleet"|"local"} (the same as
// two gauges, one of them 1), robotsgate_redis_switches_total{to="local"|"fleet"}
// (how often the replica switched), robotsgate_redis_fallbacks_total
// (calls answered locally because Redis was down, failed or slow) and
// robotsgate_redis_topology{topology=…} (1 for the topology of the URL).
// Every label set is fixed.
func registerRedisMetrics(reg prometheus.Registerer, h redisHealth) error {
	boolGauge := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	cs := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "robotsgate_redis_up",
			Help: "1 while the shared Redis is in use, 0 while robotsgate falls back to local state.",
		}, func() float64 { return boolGauge(h.Healthy()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "robotsgate_redis_fallbacks_total",
			Help: "Calls answered from local state because Redis was down, failed or was slow.",
		}, func() float64 { return float64(h.Fallbacks()) }),
	}
	for _, mode := range []string{"fleet", "local"} {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "robotsgate_redis_mode",
			Help:        "1 for the mode this replica is in: fleet (shared state in Redis) or local (Redis down: local state).",
			ConstLabels: prometheus.Labels{"mode": mode},
		}, func() float64 { return boolGauge(h.Healthy() == (mode == "fleet")) }))
	}
	for _, to := range []string{"local", "fleet"} {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "robotsgate_redis_switches_total",
			Help:        "Switches between fleet mode and local mode, by the mode switched to.",
			ConstLabels: prometheus.Labels{"to": to},
		}, func() float64 {
			toLocal, toFleet := h.Switches()
			if to == "local" {
				return float64(toLocal)
			}
			return float64(toFleet)
		}))
	}
	for _, topo := range []redisfleet.Topology{redisfleet.Standalone, redisfleet.Sentinel, redisfleet.Cluster} {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "robotsgate_redis_topology",
			Help:        "1 for how the cache URL reaches Redis: standalone, sentinel or cluster.",
			ConstLabels: prometheus.Labels{"topology": string(topo)},
		}, func() float64 { return boolGauge(h.Topology() == topo) }))
	}
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("redis metrics: %w", err)
	}
	return nil
}
