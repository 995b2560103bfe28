package main

import (
	"context"
	"net"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce/redisfleet"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/conns"
)

// run serves until ctx is done or serving fails, then stops: Shutdown
// bounded by shutdown_timeout plus its grace, then the cleanup stack
// (the audit log gets what is left of that bound, at least
// [auditCloseMin]). It returns the exit code.
func (a *app) run(ctx context.Context, ready chan<- net.Addr) int {
	errc := make(chan error, 3)
	serving := 1
	go func() { errc <- a.srv.Serve(a.ln) }()
	if a.aln != nil {
		serving++
		go func() { errc <- a.srv.ServeAdmin(a.aln) }()
		a.log.Info().Str("admin_listen", a.aln.Addr().String()).Msg("admin API listening")
	}
	if a.tln != nil {
		serving++
		go func() { errc <- a.srv.ServeTransparent(a.tln) }()
		a.log.Info().Str("transparent_listen", a.tln.Addr().String()).Int("uid", os.Getuid()).
			Msg("transparent listener: serving redirected connections (the redirect must exclude this uid)")
	}
	wctx, endWatch := context.WithCancel(ctx)
	stopWatch := a.watchReloads(wctx) // SIGHUP (reload.go)
	defer func() { endWatch(); stopWatch() }()
	a.log.Info().Str("listen", a.ln.Addr().String()).Str("mode", string(a.cfg.Mode)).Str("audit_log", a.cfg.AuditLog).
		Str("agent", a.cfg.Agent).Str("cache", redisfleet.RedactCacheURL(a.cfg.Cache)).Msg("robotsgate listening")
	if ready != nil {
		select {
		case ready <- a.ln.Addr():
		case <-ctx.Done():
		}
	}

	code := 0
	select {
	case <-ctx.Done():
		a.log.Info().Int64("timeout_ms", a.cfg.ShutdownTimeout.Milliseconds()).Msg("shutting down: finishing in-flight requests")
	case err := <-errc:
		serving--
		a.log.Error().Err(err).Msg("serving failed; shutting down")
		code = 1
	}
	stopBy := time.Now().Add(a.cfg.ShutdownTimeout + conns.ShutdownGrace)
	if c := stopServing(ctx, a.cfg.ShutdownTimeout, a.srv, errc, serving, a.log); code == 0 {
		code = c
	}
	actx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(stopBy, time.Now().Add(auditCloseMin)))
	if c := a.close(actx); code == 0 {
		code = c
	}
	cancel()
	a.log.Info().Uint64("audit_records", a.auditor.Written()).Msg("stopped")
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

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
