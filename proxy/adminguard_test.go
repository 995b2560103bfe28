package proxy

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

// rawAdmin sends head (a request line and headers, without the blank
// line) to addr as it is, and returns the status and body of the answer.
func rawAdmin(t *testing.T, addr, head string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := io.WriteString(c, strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// adminSetups start robotsgate with mutate applied, and return the
// address its admin API answers at: the proxy port, or admin_listen.
var adminSetups = []struct {
	name  string
	start func(t *testing.T, mutate func(*config.Config)) (*opsProxy, string)
}{
	{"proxy port", func(t *testing.T, mutate func(*config.Config)) (*opsProxy, string) {
		var srv *Server
		p := startOpsProxy(t, mutate, func(d *Deps) { d.Load = func() (config.Config, error) { return srv.cfg, nil } })
		srv = p.srv
		return p, p.addr
	}},
	{"admin_listen", func(t *testing.T, mutate func(*config.Config)) (*opsProxy, string) {
		var srv *Server
		p := startOpsProxy(t, func(c *config.Config) {
			c.AdminListen = "127.0.0.1:9310" // served, in the test, on the listener below
			if mutate != nil {
				mutate(c)
			}
		}, func(d *Deps) { d.Load = func() (config.Config, error) { return srv.cfg, nil } })
		srv = p.srv
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.srv.ServeAdmin(ln)
		return p, ln.Addr().String()
	}},
}

// TestAdminForeignHost: every surface of the admin API (status page,
// its data and stream, every /v1/ path, metrics, readiness) answers a
// Host that does not name the listener (DNS rebinding) with 421 and one
// line, no data; localhost, loopback addresses and admin_hosts in any
// spelling are answered; the key directory and /healthz whatever the
// Host.
func TestAdminForeignHost(t *testing.T) {
	for _, setup := range adminSetups {
		t.Run(setup.name, func(t *testing.T) {
			_, addr := setup.start(t, func(c *config.Config) { c.AdminHosts = []string{"robotsgate.internal"} })
			_, port, _ := net.SplitHostPort(addr)
			refused := func(t *testing.T, head string) {
				t.Helper()
				code, body := rawAdmin(t, addr, head)
				if code != http.StatusMisdirectedRequest || !strings.Contains(body, "admin_hosts") || strings.Count(strings.TrimSpace(body), "\n") > 2 {
					t.Fatalf("%q: %d %q, want 421 and one line", head, code, body)
				}
			}
			for _, path := range []string{"/", "/status/app.js", "/v1/status", "/v1/events", "/v1/decision?url=http%3A%2F%2F127.0.0.1%3A1%2F",
				"/v1/robots?origin=http%3A%2F%2Fexample.test", "/metrics", "/readyz", "/nope"} {
				t.Run("GET "+path, func(t *testing.T) {
					refused(t, "GET "+path+" HTTP/1.1\nHost: rebind.attacker.example:"+port+"\nOrigin: http://rebind.attacker.example:"+port)
				})
			}
			t.Run("POST /v1/reload", func(t *testing.T) {
				refused(t, "POST /v1/reload HTTP/1.1\nHost: rebind.attacker.example:"+port+"\nContent-Length: 0")
			})
			for _, host := range []string{"Rebind.Attacker.Example", "rebind.attacker.example.", "localhost.attacker.example", "127.0.0.1.attacker.example",
				"0.0.0.0:" + port, "[::]:" + port, "127.1:" + port, "localhost:x", "localhost:99999", "robotsgate.internal.attacker.example"} {
				t.Run("Host "+host, func(t *testing.T) { refused(t, "GET /v1/status HTTP/1.1\nHost: "+host) })
			}
			t.Run("no Host", func(t *testing.T) { refused(t, "GET /v1/status HTTP/1.0") })
			for _, host := range []string{"localhost", "LOCALHOST.:" + port, "localhost:1", "127.0.0.1:" + port, "127.0.0.2", "[::1]:" + port,
				"[::ffff:127.0.0.1]", "Robotsgate.Internal.:8080"} {
				t.Run("allowed Host "+host, func(t *testing.T) {
					if code, body := rawAdmin(t, addr, "GET /v1/status HTTP/1.1\nHost: "+host); code != http.StatusOK {
						t.Fatalf("%d %q", code, body)
					}
				})
			}
			for _, path := range []string{"/healthz", "/.well-known/http-message-signatures-directory"} {
				t.Run("any Host "+path, func(t *testing.T) {
					if code, body := rawAdmin(t, addr, "GET "+path+" HTTP/1.1\nHost: rebind.attacker.example"); code == http.StatusMisdirectedRequest {
						t.Fatalf("%d %q", code, body)
					}
				})
			}
		})
	}
}

// TestAdminForeignHostAbsoluteForm: on admin_listen, a request whose
// absolute-form target names a foreign host is refused whatever its Host
// header says.
func TestAdminForeignHostAbsoluteForm(t *testing.T) {
	_, addr := adminSetups[1].start(t, nil)
	code, body := rawAdmin(t, addr, "GET http://rebind.attacker.example/v1/status HTTP/1.1\nHost: localhost")
	if code != http.StatusMisdirectedRequest {
		t.Fatalf("%d %q, want 421", code, body)
	}
}

// TestAdminCrossSiteStateChange: a state change (reload, purge) sent by a
// browser from another site (Sec-Fetch-Site, Origin) is refused with 403
// even with the token; basic credentials, which a browser sends by
// itself, never change state; the bearer token without Origin (robotsgate
// reload) and from the listener's own origin does.
func TestAdminCrossSiteStateChange(t *testing.T) {
	const token = "tok-123"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("x:"+token))
	for _, setup := range adminSetups {
		t.Run(setup.name, func(t *testing.T) {
			_, addr := setup.start(t, func(c *config.Config) { c.AdminToken = token })
			for _, tc := range []struct {
				name, head string
				want       int
			}{
				{"reload Origin evil", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nOrigin: http://evil.example", 403},
				{"reload Sec-Fetch-Site cross-site", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nSec-Fetch-Site: cross-site", 403},
				{"reload Sec-Fetch-Site same-site", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nSec-Fetch-Site: same-site", 403},
				{"reload Origin null", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nOrigin: null", 403},
				{"reload Origin other port", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nOrigin: http://127.0.0.1:1", 403},
				{"purge Origin evil", "DELETE /v1/robots?origin=http%3A%2F%2Fexample.test HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nOrigin: http://evil.example", 403},
				{"reload basic", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: " + basic, 401},
				{"reload basic same origin", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: " + basic + "\nOrigin: http://" + addr + "\nSec-Fetch-Site: same-origin", 401},
				{"purge basic", "DELETE /v1/robots?origin=http%3A%2F%2Fexample.test HTTP/1.1\nHost: " + addr + "\nAuthorization: " + basic, 401},
				{"status page basic", "GET /v1/status HTTP/1.1\nHost: " + addr + "\nAuthorization: " + basic, 200},
				{"decision fetched by another site", "GET /v1/decision?url=http%3A%2F%2F127.0.0.1%3A1%2F HTTP/1.1\nHost: " + addr + "\nSec-Fetch-Site: cross-site\nSec-Fetch-Mode: no-cors", 403},
				{"status page linked from another site", "GET / HTTP/1.1\nHost: " + addr + "\nAuthorization: " + basic + "\nSec-Fetch-Site: cross-site\nSec-Fetch-Mode: navigate", 200},
				{"reload bearer", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token, 200},
				{"reload bearer own origin", "POST /v1/reload HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + token + "\nOrigin: http://" + addr + "\nSec-Fetch-Site: same-origin", 200},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if !strings.Contains(tc.head, "GET ") {
						tc.head += "\nContent-Length: 0"
					}
					if code, body := rawAdmin(t, addr, tc.head); code != tc.want {
						t.Fatalf("%d %q, want %d", code, body, tc.want)
					}
				})
			}
		})
	}
}
