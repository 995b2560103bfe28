package main

import (
	"testing"

	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestRedisCacheEntriesMetric: with -cache redis://..., the metric
// robotsgate_robots_cache_entries counts the robots.txt entries the
// process holds, as it does with the in-memory cache.
func TestRedisCacheEntriesMetric(t *testing.T) {
	srv := redistest.Start(t)
	originA, _ := newTestOrigin(t, nil)
	originB, _ := newTestOrigin(t, nil)
	r := startServe(t, []string{"-cache", srv.URL(0), "-audit-log", "-"}, nil)
	r.getAll(t, originA.URL+"/private/x", originB.URL+"/page")
	b := r.metrics(t)
	if testsupport.MetricValue(t, string(b), "robotsgate_robots_cache_entries") != 2 {
		t.Fatalf("metrics after two origins' robots.txt were cached:\n%s", b)
	}
}
