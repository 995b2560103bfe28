package main

import (
	"context"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

// startVolume starts the crawl report's volume records (audit_volume_interval):
// an Aggregator flushed to the audit log at every interval and once more
// when serve stops, before the audit log is closed (its closer is pushed
// after the audit log's, so it is popped before); a last flush stalled
// with the audit log is waited for only within the stop's bound. nil
// when they are off.
func (a *app) startVolume() *volume.Aggregator {
	if a.cfg.Volume.Interval <= 0 {
		return nil
	}
	v := volume.New(a.auditor, nil, a.cfg.Volume.MaxOrigins)
	ctx, cancel := context.WithCancel(context.Background())
	t := time.NewTicker(a.cfg.Volume.Interval)
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.Run(ctx, t.C, func(err error) { a.log.Error().Err(err).Msg("volume records not written") })
	}()
	a.push(func(ctx context.Context) int {
		t.Stop()
		cancel()
		select {
		case <-done: // the last flush
		case <-ctx.Done(): // a stalled audit log: closing it gives up on the flush, counted as lost
		}
		return 0
	})
	return v
}
