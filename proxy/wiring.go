package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/signing"
	"github.com/robotsgate/robotsgate/proxy/status"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// What a Server builds around its pipeline: the answer of access control
// in front of it, the admin API beside it, and the adapters of goproxy's
// and net/http's logs to the operator log. The outbound transports are
// transport.go's.

// accessDenied counts a refusal of access control
// (robotsgate_access_denied_total) and logs it at debug level: client
// address, method, target host and why; never the credentials, nor the
// path or query of the URL.
func (s *Server) accessDenied(r *http.Request, status int) {
	s.metrics.AccessDenied(status)
	if e := s.log.Debug(); e.Enabled() {
		why := "client address not in auth.allow_cidrs"
		if status == http.StatusProxyAuthRequired {
			why = "proxy credentials missing or invalid"
		}
		target := r.Host
		if r.URL != nil && r.URL.Host != "" {
			target = r.URL.Host
		}
		e.Str("client", r.RemoteAddr).Str("method", r.Method).Str("target", answer.EscapeControl(target)).
			Int("status", status).Msg("proxy access denied: " + why)
	}
}

// adminRoutes creates the admin API. Without admin_listen it answers
// the requests addressed to the proxy port itself (goproxy's
// NonproxyHandler); with admin_listen it is served there (ServeAdmin)
// and the proxy port keeps only /healthz.
func (s *Server) adminRoutes() {
	protect := !config.IsLoopbackAddr(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		protect = !config.IsLoopbackAddr(s.cfg.AdminListen)
	}
	listen := s.cfg.Listen
	if s.cfg.AdminListen != "" {
		listen = s.cfg.AdminListen
	}
	hosts := append([]string{}, s.cfg.AdminHosts...) // and the listener's configured host
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	s.admin = admin.New(admin.Config{
		Cache: adminCache{s}, // per address (transport.go)
		DecisionAnswer: func(ctx context.Context, u *url.URL, agent string, purposes aipref.Set, use aipref.Use) answer.DecisionJSON {
			return answer.NewDecisionJSON(s.decideQuiet(s.pinnedContext(ctx, u), u, agent, purposes, use)) // (robots.go, transport.go)
		},
		Defaults: func() (string, aipref.Set, aipref.Use) {
			cfg := &s.live.Load().cfg
			return cfg.Agent, cfg.Purposes, cfg.ContentUse
		},
		Reload: func() (admin.ReloadResult, error) {
			res, err := s.Reload("POST /v1/reload")
			return res.ReloadResult, err
		},
		Metrics:   s.metrics.Handler(),
		Token:     s.cfg.AdminToken,
		Hosts:     hosts, // besides localhost and the connection's address (proxy/admin/guard.go)
		Protect:   protect,
		Ready:     s.ready,
		Directory: signing.DirectoryHandler(s.directoryKeys, s.clock.Now),
		Now:       s.clock.Now,
		Status:    status.Handler(s.board, s.statusInfo), // (wiring.go)
	})
	if s.cfg.AdminListen == "" {
		s.mux.Handle("/", s.admin)
	}
}

// ready is /readyz: the Server has a listener, the audit log is
// writable, and the cache setting can work (a Redis that refuses it
// leaves this replica on local state: not ready; a Redis outage does
// not).
func (s *Server) ready() error {
	s.mu.Lock()
	listening, down := len(s.servers) > 0, s.shutdown
	s.mu.Unlock()
	switch {
	case down:
		return errors.New("shutting down")
	case !listening:
		return errors.New("not listening yet")
	}
	if s.cacheStatus != nil {
		if p := s.cacheStatus().Problem; p != "" {
			return errors.New("cache: " + p + " (fleet state: local only)")
		}
	}
	return s.audit.Ready()
}

// httpErrorLogWriter feeds net/http.Server's ErrorLog (TLS handshake
// errors, bad requests, ...) to zerolog at debug level: they are client
// faults, not operator problems.
type httpErrorLogWriter struct {
	log zerolog.Logger
}

func (w httpErrorLogWriter) Write(p []byte) (int, error) {
	w.log.Debug().Str("component", "http").Msg(enforce.RedactURLsIn(strings.TrimSpace(string(p))))
	return len(p), nil
}

// ConsoleWriter returns the human-readable zerolog writer for operator
// logs on a terminal, made safe against log injection: zerolog's
// ConsoleWriter already quotes field values that hold control characters
// ([strconv.Quote]), but prints the message as it is, so a message built
// from a header value or URL could start a forged line. Here CR, LF and
// every other control character of the message are escaped ("\n",
// "\r", "\x1b"), as JSON output escapes them.
func ConsoleWriter(w io.Writer, noColor bool) zerolog.ConsoleWriter {
	return zerolog.ConsoleWriter{
		Out:        w,
		NoColor:    noColor,
		TimeFormat: time.RFC3339,
		FormatMessage: func(i any) string {
			if i == nil {
				return ""
			}
			return answer.EscapeControl(fmt.Sprint(i))
		},
	}
}

// The live status page of the admin listener: the Board every audit
// record is published to after it is written (Server.record), and what
// the page shows besides (statusInfo): the robots.txt cache and a summary
// of the configuration in force, without its secrets.

// statusInfo is the page's cache state, configuration summary and
// payment budgets.
func (s *Server) statusInfo() status.Info {
	l := s.live.Load()
	cfg := &l.cfg
	var c status.Cache
	if s.cacheStatus != nil {
		c = s.cacheStatus()
	}
	if c.Mode == "" {
		c.Mode = status.CacheMode(cfg.Cache)
	}
	spend := status.Spends(s.wallet, cfg.Payment.Budgets, l.acl.Identities(), s.clock.Now()) // (status/spend.go)
	return status.Info{Cache: c, Config: status.Summary(cfg, c), Spend: spend}
}
