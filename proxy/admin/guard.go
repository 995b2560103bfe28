package admin

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
)

// Which requests the admin API answers at all, before its token.
//
// The Host: a web page whose name an attacker makes resolve to
// robotsgate's address (DNS rebinding) sends requests with the page's own
// name as Host, and the browser lets the page read the answers. So only
// a Host naming this listener is answered: localhost, a loopback address,
// the address the connection came in on, or a name of Config.Hosts (the
// listener's configured host and admin_hosts), in any port (port
// forwarding changes it; rebinding does not need to). Anything else, a
// missing Host included, gets 421 and one line saying why. The key
// directory (public, fetched by origins under the operator's public
// name) and /healthz (liveness, nothing else) are answered whatever the
// Host.
//
// Cross-site requests: a browser sends a form POST to any address with
// the cookies and basic credentials it holds for it. A request that
// changes state (any method but GET and HEAD) is refused with 403 when
// its Sec-Fetch-Site says cross-site or same-site, or its Origin is not
// this listener's own (http://Host); so is a read another site's page
// fetches (not a navigation). And basic credentials, which a
// browser caches and sends by itself, are accepted only for GET of the
// status page and its streams (authorized); a state change needs the
// bearer token.

// hostFree reports whether path is answered whatever the Host.
func hostFree(path string) bool { return path == directoryPath || path == "/healthz" }

// foreignHost returns why the Host of r does not name this listener, ""
// when it does. An absolute-form request target's host (net/http makes
// it r.Host) is checked as well.
func (a *Admin) foreignHost(r *http.Request) string {
	hosts := []string{r.Host}
	if r.URL.Host != "" {
		hosts = append(hosts, r.URL.Host)
	}
	for _, h := range hosts {
		if a.knownHost(r, h) {
			continue
		}
		shown := "no Host"
		if h != "" {
			shown = "Host " + strconv.QuoteToASCII(bounded(h, 256))
		}
		return "robotsgate admin: " + shown + " is not this listener's address, localhost or a name of admin_hosts: refused " +
			"(a web page could be reaching it under its own name, DNS rebinding); list the name in admin_hosts to use it"
	}
	return ""
}

// knownHost reports whether hostport (a Host value) names this listener:
// localhost, a loopback address, the local address of r's connection, or
// a name of [Config.Hosts], with any valid port or none.
func (a *Admin) knownHost(r *http.Request, hostport string) bool {
	canon, _ := splitHost(hostport)
	if canon == "" {
		return false
	}
	if canon == "localhost" || a.hosts[canon] {
		return true
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(canon, "["), "]"))
	if err != nil {
		return false
	}
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lap, err := netip.ParseAddrPort(local.String())
	return err == nil && lap.Addr().Unmap().WithZone("") == ip && !ip.IsUnspecified()
}

// unspecified reports whether the canonical host canon is 0.0.0.0 or
// [::]: a listener's wildcard, never a name a client should send (a
// page on any site can send it, to reach local services).
func unspecified(canon string) bool {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(canon, "["), "]"))
	return err == nil && ip.Unmap().IsUnspecified()
}

// changesState reports whether r's method may change state: any but
// GET and HEAD.
func changesState(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// crossSite returns why r, sent by a page of another site, is refused;
// "" when it is not. A state change is refused when Sec-Fetch-Site is
// cross-site or same-site, or its Origin is not this listener's own
// (http://Host, compared as hosts are). A read is refused when another
// site's page fetches it (Sec-Fetch-Site cross-site or same-site, and not
// a navigation): it could make robotsgate fetch policy files
// (/v1/decision, /v1/robots?fetch=1); following a link to the status
// page is a navigation, and stays open.
func crossSite(r *http.Request) string {
	site := strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site")))
	other := site == "cross-site" || site == "same-site"
	if !changesState(r) {
		if other && !strings.EqualFold(strings.TrimSpace(r.Header.Get("Sec-Fetch-Mode")), "navigate") {
			return "admin API: a request from another site's page (Sec-Fetch-Site: " + site + ") is refused; open the admin address itself"
		}
		return ""
	}
	if other {
		return "admin API: " + r.Method + " from another site (Sec-Fetch-Site: " + site + ") is refused"
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		return ""
	}
	if len(origins) > 1 || !sameOrigin(origins[0], r.Host) {
		return "admin API: " + r.Method + " with Origin " + strconv.QuoteToASCII(bounded(strings.Join(origins, ", "), 256)) +
			" is refused: only this listener's own origin may change state"
	}
	return ""
}

// sameOrigin reports whether the Origin value origin is http://host
// (host a Host value): same host in canonical spelling, same port
// (80 when none is given).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	oh, op := splitHost(u.Host)
	hh, hp := splitHost(host)
	return oh != "" && oh == hh && op == hp
}

// splitHost returns the canonical host ([enforce.CanonicalHost]) and
// the port (80 when none) of a host[:port] value; "" for both when it is
// not one (a port that is not 1 to 65535 in digits included).
func splitHost(hostport string) (host, port string) {
	host, port = hostport, "80"
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return "", ""
	}
	canon, err := enforce.CanonicalHost(host)
	if err != nil || canon == "" {
		return "", ""
	}
	return canon, strconv.Itoa(n)
}

// bounded cuts s to at most n bytes.
func bounded(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
