package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// runServe runs the proxy until ctx is done (SIGINT/SIGTERM), then stops
// gracefully: it stops accepting, lets in-flight requests finish (bounded
// by shutdown_timeout) and flushes and closes the audit log. When ready is
// not nil it receives the proxy's address once it listens. It returns the
// exit code: 0 after a clean stop, 2 for bad configuration (one line on
// stderr, before listening; an address that cannot be bound is one), 1
// for other failures.
func runServe(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer, ready chan<- net.Addr) int {
	cfg, err := loadConfig(args, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "Usage: robotsgate [serve] [flags]")
		serveFlagUsage(stdout)
		return 0
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	log, err := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	if err != nil {
		return fail(stderr, 2, err)
	}
	// Both addresses are bound first: one that cannot be bound (in use,
	// not an address of this host) is a configuration error, reported
	// before anything else happens. Connections wait in the backlog until
	// the proxy serves.
	ln, err := listen("listen", cfg.Listen)
	if err != nil {
		return fail(stderr, 2, err)
	}
	var aln net.Listener
	if cfg.AdminListen != "" {
		if aln, err = listen("admin_listen", cfg.AdminListen); err != nil {
			ln.Close()
			return fail(stderr, 2, err)
		}
	}
	started := false
	defer func() {
		if !started { // failed before serving
			ln.Close()
			if aln != nil {
				aln.Close()
			}
		}
	}()

	aw, err := audit.Open(cfg.AuditLog, audit.Rotation{MaxSizeMB: cfg.AuditMaxSizeMB, MaxBackups: cfg.AuditMaxBackups, MaxAgeDays: cfg.AuditMaxAgeDays}, stdout)
	if err != nil {
		return fail(stderr, 2, err)
	}
	auditor := audit.New(aw)

	tr, err := proxy.NewTransport(cfg)
	if err != nil {
		closeAudit(context.Background(), auditor, log)
		return fail(stderr, 2, err)
	}
	store, pacer, pauses, closeStore, err := newStore(ctx, cfg, log)
	if err != nil {
		closeAudit(context.Background(), auditor, log)
		return fail(stderr, 2, err)
	}
	defer closeStore()
	metrics := proxy.NewMetrics() // [metrics] one private registry per Server
	if l, ok := store.(interface{ Len() int }); ok {
		metrics.CacheEntriesFunc(l.Len)
	}
	if h, ok := store.(redisHealth); ok { // [redis] redis_metrics.go
		if err := registerRedisMetrics(metrics.Registry(), h); err != nil {
			log.Warn().Err(err).Msg("redis metrics not exported")
		}
	}
	enf, err := enforce.New(enforce.Config{
		Fetcher: &enforce.HTTPFetcher{
			Transport:    tr,
			UserAgent:    cfg.Robots.UserAgent,
			MaxBytes:     cfg.Robots.MaxBytes,
			MaxRedirects: fetcherRedirects(cfg.Robots.MaxRedirects),
			Timeout:      cfg.Robots.FetchTimeout,
		},
		Store:             store,
		Log:               log.With().Str("component", "enforce").Logger(),
		Hooks:             metrics.EnforceHooks(), // [metrics]
		TTL:               cfg.Robots.TTL,
		MinTTL:            cfg.Robots.MinTTL,
		UnreachableWindow: cfg.Robots.UnreachableWindow,
		RetryMin:          cfg.Robots.RetryMin,
		RetryMax:          cfg.Robots.RetryMax,
		MaxBytes:          cfg.Robots.MaxBytes,
		FetchTimeout:      cfg.Robots.FetchTimeout,
	})
	if err != nil {
		closeAudit(context.Background(), auditor, log)
		return fail(stderr, 2, err)
	}
	srv, err := proxy.New(cfg, proxy.Deps{Enforcer: enf, Auditor: auditor, Log: log, Transport: tr, Metrics: metrics,
		Pacer: pacer, Pauses: pauses})
	if err != nil {
		closeAudit(context.Background(), auditor, log)
		return fail(stderr, 2, err)
	}

	errc := make(chan error, 2)
	started, serving := true, 1
	go func() { errc <- srv.Serve(ln) }()
	if aln != nil {
		serving++
		go func() { errc <- srv.ServeAdmin(aln) }()
		log.Info().Str("admin_listen", aln.Addr().String()).Msg("admin API listening")
	}
	log.Info().Str("listen", ln.Addr().String()).Str("mode", cfg.Mode).Str("audit_log", cfg.AuditLog).
		Str("agent", cfg.Agent).Str("cache", enforce.RedactCacheURL(cfg.Cache)).Msg("robotsgate listening")
	if ready != nil {
		select {
		case ready <- ln.Addr():
		case <-ctx.Done():
		}
	}

	code := 0
	select {
	case <-ctx.Done():
		log.Info().Dur("timeout", cfg.ShutdownTimeout).Msg("shutting down: finishing in-flight requests")
	case err := <-errc:
		serving--
		log.Error().Err(err).Msg("serving failed; shutting down")
		code = 1
	}
	// The whole stop is bounded: Shutdown by shutdown_timeout plus its
	// grace for the handlers it cut, closing the audit log by what is left
	// of that grace, at least auditCloseMin.
	stopBy := time.Now().Add(cfg.ShutdownTimeout + shutdownGrace)
	if c := stopServing(ctx, cfg.ShutdownTimeout, srv, errc, serving, log); code == 0 {
		code = c
	}
	actx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(stopBy, time.Now().Add(auditCloseMin)))
	if c := closeAudit(actx, auditor, log); code == 0 {
		code = c
	}
	cancel()
	log.Info().Uint64("audit_records", auditor.Written()).Msg("stopped")
	return code
}

// stopServing shuts srv down within timeout (plus Shutdown's grace) and
// collects the results of its serving goroutines still running (serving
// of them, on errc). It returns 1 when one failed, else 0.
func stopServing(ctx context.Context, timeout time.Duration, srv *proxy.Server, errc <-chan error, serving int, log zerolog.Logger) int {
	code := 0
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn().Err(err).Msg("shutdown bound reached; remaining connections closed")
	}
	cancel()
	for ; serving > 0; serving-- {
		if err := <-errc; err != nil && code == 0 {
			log.Error().Err(err).Msg("serving failed")
			code = 1
		}
	}
	return code
}

// closeAudit closes the audit log within ctx and returns 1 when a record
// could not be written (lost ones included: under way when ctx ended,
// not known written) or closing failed, else 0. Both are logged, with
// the counts.
func closeAudit(ctx context.Context, auditor *audit.Auditor, log zerolog.Logger) int {
	code := 0
	if err := auditor.CloseContext(ctx); err != nil {
		log.Error().Err(err).Msg("closing the audit log")
		code = 1
	}
	if n := auditor.Failed(); n > 0 {
		log.Error().Uint64("failed", n).Uint64("lost", auditor.Lost()).
			Msg("audit records could not be written (lost: under way when the audit log was closed, not known written)")
		code = 1
	}
	return code
}

// shutdownGrace is how long proxy.Server.Shutdown waits, after
// shutdown_timeout, for the handlers it cut to write their audit records.
const shutdownGrace = 5 * time.Second

// auditCloseMin is the least time closing the audit log gets at the end
// of a stop, even when Shutdown used all of shutdown_timeout and the
// grace.
const auditCloseMin = time.Second

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// newStore returns the robots.txt cache that cfg.Cache names, the
// politeness state to go with it (nil for in-memory) and a func releasing
// them. With a redis:// cache, all three are shared by the replicas on
// that Redis and fall back to local ones while it is down.
func newStore(ctx context.Context, cfg proxy.Config, log zerolog.Logger) (enforce.Store, enforce.Pacer, enforce.Pauses, func(), error) {
	if cfg.Cache == "memory" {
		return enforce.NewMemoryStoreSize(cfg.Robots.MaxEntries, int64(cfg.Robots.MaxCacheMB)<<20), nil, nil, func() {}, nil
	}
	enforce.SetRedisClientLog(log)
	r, err := enforce.NewRedis(ctx, cfg.Cache, enforce.RedisOptions{
		Log:      log.With().Str("component", "redis").Logger(),
		MaxBytes: cfg.Robots.MaxBytes,
		Local:    enforce.NewMemoryStoreSize(cfg.Robots.MaxEntries, int64(cfg.Robots.MaxCacheMB)<<20),
	})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("cache: %w", err)
	}
	return r.Store(), r.Pacer(), r.Pauses(), func() {
		if err := r.Close(); err != nil {
			log.Warn().Err(err).Msg("closing redis")
		}
	}, nil
}

// fetcherRedirects maps robots.max_redirects to HTTPFetcher.MaxRedirects,
// where 0 means the default and a negative value none.
func fetcherRedirects(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// listen binds addr, the value of the setting key; the error names both.
func listen(key, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", key, addr, err)
	}
	return ln, nil
}

// fail prints err as one line on stderr and returns code.
func fail(stderr io.Writer, code int, err error) int {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "robotsgate: %s\n", msg)
	return code
}
