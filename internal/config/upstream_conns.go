package config

import "time"

// UpstreamConfig is how the connections to origins that carry forwarded
// requests are kept: a broad crawl visits most origins once, so their
// idle connections are kept few and briefly.
type UpstreamConfig struct {
	MaxIdleConns        int           // idle connections kept in all
	MaxIdleConnsPerHost int           // idle connections kept per origin
	IdleTimeout         time.Duration // an idle connection is closed after this
	// FirstIdleTimeout closes sooner an idle connection that has carried
	// one forwarded request; 0 = IdleTimeout.
	FirstIdleTimeout time.Duration
}

// maxIdleConns bounds upstream.max_idle_conns: each idle connection
// holds two goroutines, two buffers and a file descriptor.
const maxIdleConns = 1 << 20

// validateUpstream checks the upstream: section.
func (c *Config) validateUpstream() error {
	u := &c.Upstream
	if err := positive(duration{"upstream.idle_timeout", u.IdleTimeout}); err != nil {
		return err
	}
	switch {
	case u.MaxIdleConns <= 0 || u.MaxIdleConns > maxIdleConns:
		return errorf("upstream.max_idle_conns", "%d is not between 1 and %d", u.MaxIdleConns, maxIdleConns)
	case u.MaxIdleConnsPerHost <= 0 || u.MaxIdleConnsPerHost > u.MaxIdleConns:
		return errorf("upstream.max_idle_conns_per_host", "%d is not between 1 and upstream.max_idle_conns (%d)", u.MaxIdleConnsPerHost, u.MaxIdleConns)
	case u.FirstIdleTimeout < 0:
		return errorf("upstream.first_idle_timeout", "%v is negative (0 means upstream.idle_timeout)", u.FirstIdleTimeout)
	case u.FirstIdleTimeout > u.IdleTimeout:
		return errorf("upstream.first_idle_timeout", "%v exceeds upstream.idle_timeout (%v)", u.FirstIdleTimeout, u.IdleTimeout)
	}
	return nil
}
