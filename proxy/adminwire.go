package proxy

import (
	"context"
	"errors"
	"net/url"

	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/admin"
)

// adminRoutes creates the admin API. Without admin_listen it answers
// the requests addressed to the proxy port itself (goproxy's
// NonproxyHandler); with admin_listen it is served there (ServeAdmin)
// and the proxy port keeps only /healthz.
func (s *Server) adminRoutes() {
	protect := !access.IsLoopbackAddr(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		protect = !access.IsLoopbackAddr(s.cfg.AdminListen)
	}
	s.admin = admin.New(admin.Config{
		Cache: s.enf,
		Decide: func(ctx context.Context, u *url.URL, agent string) any {
			return NewDecisionJSON(s.enf.DecideQuiet(ctx, u, agent))
		},
		Metrics: s.metrics.Handler(),
		Token:   s.cfg.AdminToken,
		Protect: protect,
		Agent:   s.cfg.Agent,
		Ready:   s.ready,
		Now:     s.clock.Now,
	})
	if s.cfg.AdminListen == "" {
		s.mux.Handle("/", s.admin)
	}
}

// ready is /readyz: the Server has a listener and the audit log is
// writable.
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
	return s.audit.Ready()
}
