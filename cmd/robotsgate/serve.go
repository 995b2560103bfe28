package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
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
		config.PrintFlags(stdout)
		return 0
	}
	if err == nil {
		err = checkPaths(cfg)
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	a, err := newApp(ctx, cfg, stdout, stderr)
	if err == nil {
		a.load = func() (config.Config, error) { return loadConfig(args, env) } // reload.go
	}
	if err != nil {
		return fail(stderr, 2, err)
	}
	for _, w := range config.UnknownEnv(os.Environ()) { // a misspelled ROBOTSGATE_* variable
		a.log.Warn().Msg(w)
	}
	applyMemoryLimit(cfg, env, a.log) // memory.go
	applyGCPercent(env, a.log)        // memory.go, once the limit is in force
	return a.run(ctx, ready)
}

// checkPaths checks, before anything is bound or created, that the
// directories serve writes to exist.
func checkPaths(cfg config.Config) error {
	if err := cfg.CheckAuditDir(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// closer releases one resource of an app within ctx and returns the exit
// code it calls for (0 when all went well).
type closer func(ctx context.Context) int

// app is one run of serve: the configuration, the operator log, the
// listeners and the proxy built on them, and the cleanup stack: each
// resource pushes its closer when it is acquired, and close pops them in
// reverse order.
type app struct {
	cfg     config.Config
	log     zerolog.Logger
	ln, aln net.Listener // aln is nil without admin_listen
	tln     net.Listener // the transparent listener; nil without transparent.listen
	auditor *audit.Auditor
	srv     *proxy.Server
	cleanup []closer
	// load reads the configuration again, as at the start, for a reload
	// (SIGHUP, POST /v1/reload).
	load func() (config.Config, error)
}

// push adds c to the cleanup stack.
func (a *app) push(c closer) { a.cleanup = append(a.cleanup, c) }

// close pops and runs the cleanup stack within ctx and returns the first
// non-zero exit code of the closers.
func (a *app) close(ctx context.Context) int {
	code := 0
	for i := len(a.cleanup) - 1; i >= 0; i-- {
		if c := a.cleanup[i](ctx); code == 0 {
			code = c
		}
	}
	a.cleanup = nil
	return code
}

// newApp acquires everything serve needs, in order, before anything is
// served. Both addresses are bound first: one that cannot be bound (in
// use, not an address of this host) is a configuration error, reported
// before anything else happens; connections wait in the backlog until the
// proxy serves. On an error everything acquired so far is released.
func newApp(ctx context.Context, cfg config.Config, stdout, stderr io.Writer) (*app, error) {
	log, err := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: log}
	if err := a.build(ctx, stdout); err != nil {
		a.close(context.Background())
		return nil, err
	}
	return a, nil
}

// build acquires the listeners, the audit log, the robots.txt cache and
// the proxy, pushing the closer of each.
func (a *app) build(ctx context.Context, stdout io.Writer) error {
	cfg := a.cfg
	var err error
	if a.ln, err = a.listen("listen", cfg.Listen); err != nil {
		return err
	}
	if cfg.AdminListen != "" {
		if a.aln, err = a.listen("admin_listen", cfg.AdminListen); err != nil {
			return err
		}
	}
	if cfg.Transparent.Listen != "" {
		if a.tln, err = a.listen("transparent.listen", cfg.Transparent.Listen); err != nil {
			return err
		}
	}
	aw, err := audit.Open(cfg.AuditLog, audit.Rotation{MaxSizeMB: cfg.AuditMaxSizeMB, MaxBackups: cfg.AuditMaxBackups, MaxAgeDays: cfg.AuditMaxAgeDays}, stdout)
	if err != nil {
		return err
	}
	a.auditor = audit.New(aw)
	a.push(func(ctx context.Context) int { return closeAudit(ctx, a.auditor, a.log) })
	tr, err := proxy.NewTransport(cfg)
	if err != nil {
		return err
	}
	ptr, err := proxy.NewPolicyTransport(cfg) // robots.txt never shares a connection with a client's bytes
	if err != nil {
		return err
	}
	st, err := newStore(ctx, cfg, a.log)
	if err != nil {
		return err
	}
	a.push(st.close)
	metrics := proxy.NewMetrics() // one private registry per Server
	st.export(metrics, a.log)
	fetchSig := new(signing.Holder) // robots.txt and tdmrep.json fetches signed with signing.key (Web Bot Auth)
	ec := proxy.EnforceConfig(cfg, fetchSig.Transport(ptr), st.store, metrics, a.log)
	if docs := openDocuments(cfg, a.log); docs != nil { // documents.go; closed after the Enforcer
		ec.Documents = docs
		a.push(func(context.Context) int { docs.Close(); return 0 })
	}
	enf, err := enforce.New(ec)
	if err != nil {
		return err
	}
	// Popped before the store's close: background revalidations write to it.
	a.push(func(context.Context) int { enf.Close(); return 0 })
	if err := registerAuditMetrics(metrics.Registry(), a.auditor); err != nil { // audit_metrics.go
		a.log.Warn().Err(err).Msg("audit metrics not exported")
	}
	a.srv, err = proxy.New(cfg, proxy.Deps{Enforcer: enf, Auditor: a.auditor, Log: a.log, Transport: tr,
		PolicyTransport: ptr, Metrics: metrics, Pacer: st.pacer, Pauses: st.pauses, Load: a.reloadConfig, FetchSigner: fetchSig,
		CacheStatus: st.status, Volume: a.startVolume(), Wallet: st.wallet()})
	if err != nil {
		return err
	}
	return enableDigests(a.auditor, cfg, a.log) // audit_verify.go; after proxy.New, which names a bad signing.key first
}

// listen binds addr, the value of the setting key, and pushes its close;
// the error names both.
func (a *app) listen(key, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", key, addr, err)
	}
	a.push(func(context.Context) int {
		_ = ln.Close() // already closed by Shutdown once served
		return 0
	})
	return ln, nil
}

// fail prints err as one line on stderr and returns code.
func fail(stderr io.Writer, code int, err error) int {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "robotsgate: %s\n", msg)
	return code
}

// auditCloseMin is the least time closing the audit log gets at the end
// of a stop, even when Shutdown used all of shutdown_timeout and the
// grace.
const auditCloseMin = time.Second
