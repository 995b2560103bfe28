package proxy

import (
	"net/http"

	"github.com/robotsgate/robotsgate/proxy/access"
)

// accessControl wraps h with the configured access control (Access.Wrap);
// it returns h itself when none is configured.
func (s *Server) accessControl(h http.Handler) (http.Handler, error) {
	auth := s.cfg.Auth
	a, err := access.New(access.Options{Credentials: auth.Credentials, CredentialsFile: auth.CredentialsFile,
		AllowCIDRs: auth.AllowCIDRs, Denied: s.accessDenied})
	if err != nil {
		return nil, err
	}
	if a.RequiresCredentials() || a.Networks() > 0 {
		s.log.Info().Bool("credentials", a.RequiresCredentials()).Int("allow_cidrs", a.Networks()).Msg("proxy access control on")
	}
	return a.Wrap(h), nil
}

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
		e.Str("client", r.RemoteAddr).Str("method", r.Method).Str("target", EscapeControl(target)).
			Int("status", status).Msg("proxy access denied: " + why)
	}
}
