package main

import (
	"github.com/robotsgate/robotsgate/enforce/redisfleet"
	"github.com/robotsgate/robotsgate/internal/config"
)

// loadConfig loads the configuration of serve, health and ca
// ([config.Load]) and checks a redis:// cache URL with the Redis layer that
// will use it, so that a bad one is a configuration error too.
func loadConfig(args []string, env func(string) string) (config.Config, error) {
	cfg, err := config.Load(args, env)
	if err != nil {
		return config.Config{}, err
	}
	if cfg.Cache != "memory" {
		if err := redisfleet.ValidateRedisURL(cfg.Cache); err != nil {
			return config.Config{}, cacheURLError{err}
		}
	}
	return cfg, nil
}

// cacheURLError is the error of a bad cache URL as the operator reads it:
// about the setting (the Redis layer's error names the URL and the
// reason, and no Go package).
type cacheURLError struct{ err error }

func (e cacheURLError) Error() string { return "config: cache: " + e.err.Error() }

func (e cacheURLError) Unwrap() error { return e.err }
