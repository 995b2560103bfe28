package proxy

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// BenchmarkTransparent is BenchmarkRobotsgate's requests as the
// transparent listener's http.Server hands them on: origin-form, on a
// connection (one per parallel worker) whose original destination is the
// origin. Compare with BenchmarkRobotsgate; the connection's own cost
// (original destination, sniffing) is paid once per connection, not per
// request, and is not included.
func BenchmarkTransparent(b *testing.B) {
	for _, mix := range benchMixes {
		b.Run(mix.name, func(b *testing.B) {
			o := benchOrigin(b)
			cfg := testConfig(b)
			cfg.HTTPS.Mode = config.HTTPSModeTunnel
			cfg.Transparent.Listen = "127.0.0.1:0"
			srv, err := buildServer(b, cfg, enforce.Config{}, Deps{Auditor: audit.New(nopCloser{io.Discard})})
			if err != nil {
				b.Fatal(err)
			}
			host := strings.TrimPrefix(o.URL, "http://")
			dst := netip.MustParseAddrPort(host)
			h := srv.life.Wrap(http.HandlerFunc(srv.serveRedirected))
			benchServe(b, h, mix.paths, func() func(*http.Request) *http.Request {
				ctx := context.WithValue(context.Background(), redirectedKey{}, &redirected{dst: dst})
				return func(r *http.Request) *http.Request {
					r = r.WithContext(ctx)
					r.Host = host
					return r
				}
			})
		})
	}
}
