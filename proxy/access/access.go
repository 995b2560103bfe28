// Package access is robotsgate's access control for proxy clients: client
// networks (403) and Proxy-Authorization: Basic credentials (407).
package access

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
)

// Access is robotsgate's access control for proxy clients: an optional
// allow-list of client networks (403 otherwise) and optional
// Proxy-Authorization: Basic credentials (407 otherwise). It applies to
// proxy requests (absolute-URL requests and CONNECT); requests addressed
// to robotsgate itself (the admin API) have their own bearer token.
//
// Credentials are kept only as SHA-256 digests of "user:password" and
// compared in constant time; they are never logged. An Access is
// immutable and safe for concurrent use.
type Access struct {
	creds [][sha256.Size]byte
	ids   []Identity // ids[i] is the Identity of creds[i]
	nets  []netip.Prefix
	// denied, when set, is told about every refusal (metrics, debug log).
	denied func(r *http.Request, status int)
}

// Options are the inputs of New.
type Options struct {
	Credentials     []string       // "user:password" pairs
	CredentialsFile string         // a file of "user:password" lines; "" for none
	AllowCIDRs      []netip.Prefix // client networks; empty: any
	// Denied, when set, is told about every refusal (metrics, debug log).
	Denied func(r *http.Request, status int)
}

// New builds the Access of cfg, reading cfg.CredentialsFile (lines of
// "user:password", optionally followed by the identity fields
// "agent=TOKEN" and "purposes=LIST" ([parseCredentialLine]); blank lines
// and lines starting with # are skipped). A
// cfg with neither credentials nor CIDRs lets every client in.
func New(cfg Options) (*Access, error) {
	a := &Access{denied: cfg.Denied}
	for i, c := range cfg.Credentials {
		if err := config.CheckCredential(c); err != nil {
			return nil, fmt.Errorf("auth.credentials[%d]: %w", i, err)
		}
		a.creds = append(a.creds, sha256.Sum256([]byte(c)))
		user, _, _ := strings.Cut(c, ":")
		a.ids = append(a.ids, Identity{User: user})
	}
	if cfg.CredentialsFile != "" {
		b, err := readCredentialsFile(cfg.CredentialsFile)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cred, id, err := parseCredentialLine(line)
			if err == nil {
				err = config.CheckCredential(cred)
			}
			if err != nil {
				return nil, fmt.Errorf("auth.credentials_file %s:%d: %w", cfg.CredentialsFile, n, err)
			}
			sum := sha256.Sum256([]byte(cred))
			if slices.Contains(a.creds, sum) {
				// Two identities for one credential: which applies would
				// depend on the order of the lines.
				return nil, fmt.Errorf("auth.credentials_file %s:%d: user %q: these credentials are given on an earlier line too", cfg.CredentialsFile, n, id.User)
			}
			a.creds = append(a.creds, sum)
			a.ids = append(a.ids, id)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("auth.credentials_file %s: %w", cfg.CredentialsFile, err)
		}
		if len(a.creds) == 0 {
			return nil, fmt.Errorf("auth.credentials_file %s: no credentials in it", cfg.CredentialsFile)
		}
	}
	a.nets = append(a.nets, cfg.AllowCIDRs...)
	return a, nil
}

// Identities returns the identities of the credentials, in order.
func (a *Access) Identities() []Identity { return slices.Clone(a.ids) }

// RequiresCredentials reports whether clients must send
// Proxy-Authorization.
func (a *Access) RequiresCredentials() bool { return len(a.creds) > 0 }

// Networks returns the number of allowed client networks (0: any).
func (a *Access) Networks() int { return len(a.nets) }

// Check returns 0 when r may use the proxy, [http.StatusForbidden] when its
// client address is outside the allow-list, and
// [http.StatusProxyAuthRequired] when its credentials are missing or wrong.
func (a *Access) Check(r *http.Request) int {
	_, code := a.check(r)
	return code
}

// check is Check, also returning the index in a.creds of the credentials
// r authenticated with (-1 when none are required or r was refused).
func (a *Access) check(r *http.Request) (int, int) {
	if len(a.nets) > 0 && !a.clientAllowed(r.RemoteAddr) {
		return -1, http.StatusForbidden
	}
	if len(a.creds) == 0 {
		return -1, 0
	}
	i := a.authorized(r.Header.Get("Proxy-Authorization"))
	if i < 0 {
		return -1, http.StatusProxyAuthRequired
	}
	return i, 0
}

// clientAllowed reports whether the address of remoteAddr ("ip:port")
// lies in one of the allowed networks.
func (a *Access) clientAllowed(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range a.nets {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// authorized returns the index in a.creds of the valid Basic
// credentials the Proxy-Authorization value h carries, -1 when it carries
// none. Every stored digest is compared, in constant time, whatever
// matches, so the timing tells nothing about which credential (or how
// much of one) was right.
func (a *Access) authorized(h string) int {
	scheme, enc, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return -1
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return -1
	}
	sum := sha256.Sum256(dec)
	idx := -1
	for i := range a.creds {
		idx = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], a.creds[i][:]), i, idx)
	}
	return idx
}

// proxyAuthRealm is the Proxy-Authenticate challenge of a 407.
const proxyAuthRealm = `Basic realm="robotsgate"`

// Wrap returns a handler that applies the access control to proxy
// requests (CONNECT, or an absolute request URI) before passing them to
// next, and passes requests addressed to robotsgate itself (the admin
// API) through untouched. Refused requests get a 403, or a 407 with a
// Proxy-Authenticate challenge; admitted ones lose their
// Proxy-Authorization header, so it never reaches an origin or a log.
func (a *Access) Wrap(next http.Handler) http.Handler {
	if len(a.nets) == 0 && len(a.creds) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect && !r.URL.IsAbs() {
			next.ServeHTTP(w, r)
			return
		}
		idx, code := a.check(r)
		if code != 0 && a.denied != nil {
			a.denied(r, code)
		}
		switch code {
		case http.StatusForbidden:
			w.Header().Set("Proxy-Status", `robotsgate;error=http_request_denied;details="client address not in auth.allow_cidrs"`)
			writeRefusal(w, http.StatusForbidden, "robotsgate: your address may not use this proxy\n")
			return
		case http.StatusProxyAuthRequired:
			w.Header().Set("Proxy-Authenticate", proxyAuthRealm)
			w.Header().Set("Proxy-Status", `robotsgate;error=http_request_denied;details="proxy authentication required"`)
			writeRefusal(w, http.StatusProxyAuthRequired, "robotsgate: proxy authentication required\n")
			return
		}
		r.Header.Del("Proxy-Authorization")
		g := Grant{set: true}
		if idx >= 0 {
			g.cred, g.hasCred = a.creds[idx], true
		}
		r = r.WithContext(context.WithValue(r.Context(), grantKey{}, g))
		if idx >= 0 {
			// The user's identity (IdentityFrom) decides for r, and for
			// the requests inside r's MITM session.
			r = r.WithContext(withIdentity(r.Context(), a.ids[idx]))
		}
		next.ServeHTTP(w, r)
	})
}

// Grant is what a request was admitted with: the digest of the
// credentials it authenticated with, if any. A CONNECT's Grant stays
// with its MITM session, whose requests carry no credentials of their
// own, so that a configuration reload can [Access.Readmit] them.
type Grant struct {
	cred    [sha256.Size]byte
	hasCred bool
	set     bool // Wrap admitted the request (access control was on)
}

type grantKey struct{}

// GrantFrom returns the Grant that Wrap attached to ctx; the zero Grant
// when none (the request was admitted with access control off).
func GrantFrom(ctx context.Context) Grant {
	g, _ := ctx.Value(grantKey{}).(Grant)
	return g
}

// Readmit is Check for a request that carries no credentials of its own
// and was admitted earlier with g, from the client address remoteAddr
// (a request inside an MITM session, once the configuration changed): 0
// when a still admits it, [http.StatusForbidden] when the address is no
// longer allowed, [http.StatusProxyAuthRequired] when its credentials
// are no longer accepted (or credentials are now required). A nil Access
// admits every request.
func (a *Access) Readmit(remoteAddr string, g Grant) int {
	if a == nil {
		return 0
	}
	if len(a.nets) > 0 && !a.clientAllowed(remoteAddr) {
		return http.StatusForbidden
	}
	if len(a.creds) == 0 {
		return 0
	}
	if !g.hasCred || !slices.Contains(a.creds, g.cred) {
		return http.StatusProxyAuthRequired
	}
	return 0
}

// writeRefusal writes a short plain-text refusal and asks the client to
// close the connection (a CONNECT client must not send its tunnel data
// on it).
func writeRefusal(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(msg)))
	h.Set("Connection", "close")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg))
}

// readCredentialsFile reads the credentials file, which group or others
// must not be able to read: its passwords are in plain text, and like the
// private keys it is refused rather than its mode fixed silently, since
// it may already have been copied.
func readCredentialsFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("auth.credentials_file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("auth.credentials_file: %w", err)
	}
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, fmt.Errorf("auth.credentials_file %s has mode %04o: group or others can read its plain-text passwords; "+
			"run `chmod 600 %s` (and change the passwords if others had access)", name, perm, name)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("auth.credentials_file %s: %w", name, err)
	}
	return b, nil
}
