package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/robotsgate/robotsgate/internal/config"
)

// reloadConfig is the proxy's loader ([proxy.Deps.Load]): the configuration
// read again from the same flags, environment and file as at the start,
// with the same checks.
func (a *app) reloadConfig() (config.Config, error) {
	if a.load == nil {
		return config.Config{}, errors.New("no configuration source to reload from")
	}
	cfg, err := a.load()
	if err != nil {
		return config.Config{}, err
	}
	if err := checkPaths(cfg); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// watchReloads reloads the configuration at each SIGHUP until ctx is
// done; the result is logged (and audited) by the proxy. It returns once
// SIGHUP is being watched; stop ends the watch.
func (a *app) watchReloads(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_, _ = a.srv.Reload("SIGHUP") // logged, audited and counted by Reload
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		<-done
	}
}
