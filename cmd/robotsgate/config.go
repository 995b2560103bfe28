package main

import (
	"fmt"

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
			return config.Config{}, fmt.Errorf("cache: %w", err)
		}
	}
	return cfg, nil
}
