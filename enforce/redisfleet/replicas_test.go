package redisfleet

import (
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/redistest"
)

// decideOnReplicas starts n concurrent decisions over three replicas
// sharing srv: decision i on replica i%3, for the path "/private" when i is
// even and "/public" when odd. It returns once every decision has started;
// the returned func waits for them and gives their results in order.
func decideOnReplicas[V any](t *testing.T, srv *redistest.Server, clock enforce.Clock, n int, decide func(e *enforce.Enforcer, path string) V) func() []V {
	t.Helper()
	var es []*enforce.Enforcer
	for range 3 {
		es = append(es, newRedisEnforcer(t, newTestRedis(t, srv, clock, nil), clock))
	}
	var wg, started sync.WaitGroup
	started.Add(n)
	results := make([]V, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			path := "/private"
			if i%2 == 1 {
				path = "/public"
			}
			results[i] = decide(es[i%len(es)], path)
		}()
	}
	started.Wait()
	return func() []V {
		wg.Wait()
		return results
	}
}

// roundTrip encodes e for Redis and decodes it back.
func roundTrip(t *testing.T, e *enforce.Entry) *enforce.Entry {
	t.Helper()
	raw, err := encodeRedisEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRedisEntry(raw, e.Key, 0)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
