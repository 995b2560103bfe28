package redisfleet

import (
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
)

// The settings these tests run with: robotsgate's defaults
// (internal/config), which neither enforce nor politeness hold.
const testMaxBytes = 500 << 10

// filledEnforce returns cfg with its zero settings set to robotsgate's
// defaults, as cmd/robotsgate passes them.
func filledEnforce(cfg enforce.Config) enforce.Config {
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&cfg.TTL, 24*time.Hour)
	or(&cfg.MinTTL, time.Minute)
	or(&cfg.UnreachableWindow, 30*24*time.Hour)
	or(&cfg.RetryMin, time.Minute)
	or(&cfg.RetryMax, time.Hour)
	or(&cfg.FetchTimeout, 10*time.Second)
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = testMaxBytes
	}
	if cfg.Store == nil {
		cfg.Store = newLocalStore()
	}
	return cfg
}

// filledPoliteness returns cfg with its zero limits set to robotsgate's
// defaults.
func filledPoliteness(cfg politeness.Config) politeness.Config {
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&cfg.MaxDelay, 60*time.Second)
	or(&cfg.MaxWait, 30*time.Second)
	or(&cfg.BackoffStart, 30*time.Second)
	or(&cfg.BackoffMax, time.Hour)
	return cfg
}

// newLocalStore returns a MemoryStore with robotsgate's default bounds.
func newLocalStore() *enforce.MemoryStore { return enforce.NewMemoryStore(100000, 512<<20) }
