// Package admin is robotsgate's admin HTTP API: health and readiness,
// metrics, the decision robotsgate would make for a URL, and the cached
// robots.txt of an origin (read, fetch, purge).
package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/status"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Cache is what the admin API needs of an *[enforce.Enforcer] to show and
// purge cached robots.txt files.
type Cache interface {
	Entry(ctx context.Context, origin string) (*enforce.Entry, error)
	Cached(ctx context.Context, origin string) (*enforce.Entry, bool)
	Purge(ctx context.Context, origin string)
}

// Config configures New.
type Config struct {
	Cache Cache // required
	// DecisionAnswer answers /v1/decision: the decision for u and agent as the
	// JSON value to send. It must not count as a proxied request (no
	// metrics).
	// purposes are the declared purposes: the configured ones, or the
	// query's purpose parameter; use the declared content use: the
	// configured one, or the query's content_use parameter.
	DecisionAnswer func(ctx context.Context, u *url.URL, agent string, purposes aipref.Set, use aipref.Use) answer.DecisionJSON
	Metrics        http.Handler // served at /metrics; nil: 404
	// Token is the bearer token of the admin API ("" = none). DELETE
	// (purge) always requires it: without a token it is refused with 403.
	// When Protect is set, every endpoint but /healthz and /readyz
	// requires it too.
	Token string
	// Protect is set when the admin API is reachable beyond loopback.
	Protect bool
	// Defaults returns the agent, purposes and content use of the
	// configuration in force (they change at a reload): what /v1/decision
	// decides for when the query has no agent, purpose or content_use
	// parameter. nil: none.
	Defaults func() (agent string, purposes aipref.Set, use aipref.Use)
	// Reload reloads the configuration for POST /v1/reload (always with
	// the token: 403 when none is configured): result is the answer, err
	// non-nil when the new configuration was refused (answered 422 with
	// result). nil: 404.
	Reload func() (result ReloadResult, err error)
	// Ready reports whether robotsgate is ready to serve (listening, audit
	// log writable); nil means always ready.
	Ready func() error
	// Now is the clock for ages; nil means [time.Now].
	Now func() time.Time
	// Status serves the live status page ([status.Handler]) at
	// [status.PagePath] and its assets, data and event stream; nil: 404.
	// When a token is configured, the page requires it even on loopback
	// (as a bearer token, or as the password of HTTP basic
	// authentication, which a browser asks for).
	Status http.Handler
	// Hosts are the host names (or addresses), besides localhost, the
	// loopback addresses and the local address of a request's
	// connection, that a request may give as its Host (the listener's
	// configured host, admin_hosts), in any spelling [config.AdminHost]
	// accepts; any other Host is answered 421 (guard.go).
	Hosts []string
	// Directory serves the Web Bot Auth key directory at
	// /.well-known/http-message-signatures-directory, to anyone (it is
	// public); nil: 404.
	Directory http.Handler
}

// directoryPath is the well-known path of the Web Bot Auth key
// directory, served without the token.
const directoryPath = "/.well-known/http-message-signatures-directory"

// Admin is robotsgate's admin HTTP API. Create it with New.
//
//	GET    /healthz                        liveness: 200 "ok"
//	GET    /readyz                         200 "ready", or 503 with the reason
//	GET    /metrics                        Prometheus metrics
//	GET    /v1/decision?url=URL&agent=NAME&purpose=LIST&content_use=LEVEL the decision robotsgate would make now (JSON)
//	GET    /v1/robots?origin=ORIGIN        the cached robots.txt state (JSON); &fetch=1 fetches it when absent or stale
//	DELETE /v1/robots?origin=ORIGIN        forget the cached robots.txt (needs the token; 403 when none is configured)
//	POST   /v1/reload                      read the configuration again (needs the token; 403 when none is configured)
//	GET    /                               the live status page (Config.Status), with /v1/status and /v1/events
type Admin struct {
	cfg   Config
	token [sha256.Size]byte
	mux   *http.ServeMux
	hosts map[string]bool // Config.Hosts, canonical (guard.go)
}

// adminAllow returns the methods of the admin endpoint path, for 405
// answers; ok is false for unknown paths.
func adminAllow(path string) (allow string, ok bool) {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/v1/decision":
		return "GET, HEAD", true
	case "/v1/robots":
		return "GET, HEAD, DELETE", true
	case "/v1/reload":
		return "POST", true
	case directoryPath:
		return "GET, HEAD", true
	}
	return "", false
}

// New returns the admin API for cfg.
func New(cfg Config) *Admin {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Admin{cfg: cfg, mux: http.NewServeMux(), hosts: map[string]bool{}}
	for _, h := range cfg.Hosts {
		if canon, _ := splitHost(h); canon != "" && !unspecified(canon) {
			a.hosts[canon] = true
		}
	}
	if cfg.Token != "" {
		a.token = sha256.Sum256([]byte(cfg.Token))
	}
	a.mux.HandleFunc("GET /healthz", Healthz)
	a.mux.HandleFunc("GET /readyz", a.readyz)
	a.mux.HandleFunc("GET /metrics", a.metrics)
	a.mux.HandleFunc("GET /v1/decision", a.decision)
	a.mux.HandleFunc("GET /v1/robots", a.robotsGet)
	a.mux.HandleFunc("DELETE /v1/robots", a.robotsDelete)
	a.mux.HandleFunc("POST /v1/reload", a.reload)
	if cfg.Status != nil {
		a.mux.Handle("GET /{$}", cfg.Status)
		a.mux.Handle("GET "+status.AssetsPath, cfg.Status)
		a.mux.Handle("GET "+status.DataPath, cfg.Status)
		a.mux.Handle("GET "+status.EventsPath, cfg.Status)
	}
	if cfg.Directory != nil {
		a.mux.Handle("GET "+directoryPath, cfg.Directory)
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		allow, ok := adminAllow(r.URL.Path)
		if cfg.Status != nil && status.IsPath(r.URL.Path) {
			allow, ok = "GET, HEAD", true
		}
		if ok {
			w.Header().Set("Allow", allow)
			writeJSON(w, http.StatusMethodNotAllowed, jsonError{Error: r.Method + " " + r.URL.Path + ": method not allowed (allowed: " + allow + ")"})
			return
		}
		writeJSON(w, http.StatusNotFound, jsonError{Error: "robotsgate admin: no such endpoint (try /, the status page, or /healthz, /readyz, /metrics, /v1/decision, /v1/robots); " +
			"to use robotsgate as a proxy, set http_proxy/https_proxy (lower case: curl and wget read no other) to this address"})
	})
	return a
}

// ServeHTTP implements [http.Handler]: it answers only a Host naming
// this listener and refuses state changes from other sites (guard.go),
// checks the token, then routes.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hostFree(r.URL.Path) {
		if why := a.foreignHost(r); why != "" {
			writeJSON(w, http.StatusMisdirectedRequest, jsonError{Error: why})
			return
		}
	}
	if why := crossSite(r); why != "" && !hostFree(r.URL.Path) {
		writeJSON(w, http.StatusForbidden, jsonError{Error: why})
		return
	}
	changes := r.Method == http.MethodDelete || (r.Method == http.MethodPost && r.URL.Path == "/v1/reload")
	if changes && a.cfg.Token == "" {
		// Purging robots.txt or reloading changes what is enforced: never
		// without admin auth, even on loopback.
		writeJSON(w, http.StatusForbidden, jsonError{Error: "admin API: " + r.Method + " is disabled: set admin_token (ROBOTSGATE_ADMIN_TOKEN) to enable purge and reload"})
		return
	}
	open := r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == directoryPath
	page := a.cfg.Status != nil && status.IsPath(r.URL.Path) // live decisions: never without the token
	need := a.cfg.Token != "" && (changes || page || (a.cfg.Protect && !open))
	basic := page && !changesState(r) // what a browser sends by itself: the page and its streams only
	if need && !a.authorized(r.Header.Get("Authorization"), basic) {
		w.Header().Add("WWW-Authenticate", `Bearer realm="robotsgate-admin"`)
		msg := "admin API: missing or wrong bearer token"
		if basic {
			w.Header().Add("WWW-Authenticate", `Basic realm="robotsgate-admin", charset="UTF-8"`)
		} else {
			msg += " (basic credentials are accepted for the status page only)"
		}
		writeJSON(w, http.StatusUnauthorized, jsonError{Error: msg})
		return
	}
	a.mux.ServeHTTP(w, r)
}

// authorized reports whether h is "Bearer <token>" with the right token,
// or, when basic is set, HTTP basic authentication with it as the
// password (any user name: what a browser sends for the status page),
// comparing digests in constant time.
func (a *Admin) authorized(h string, basic bool) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	switch {
	case !ok:
		return false
	case basic && strings.EqualFold(scheme, "Basic"):
		r := http.Request{Header: http.Header{"Authorization": {"Basic " + strings.TrimSpace(tok)}}}
		if _, pw, ok := r.BasicAuth(); ok {
			tok = pw
		} else {
			return false
		}
	case !strings.EqualFold(scheme, "Bearer"):
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], a.token[:]) == 1
}

// jsonError is the body of an admin error.
type jsonError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	// Not HTML: &, < and > stay as they are (URLs hold & often).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	var b []byte
	if err := enc.Encode(v); err != nil {
		code, b = http.StatusInternalServerError, []byte("{\"error\":\"encoding the answer failed\"}\n")
	} else {
		b = safetext.JSON(buf.Bytes()) // rules and URLs from origins, printed by curl on a terminal
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// Healthz answers GET /healthz (liveness): 200 "ok", never cached. The
// proxy listener serves it too.
func Healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

func (a *Admin) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if a.cfg.Ready != nil {
		if err := a.cfg.Ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

func (a *Admin) metrics(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Metrics == nil {
		writeJSON(w, http.StatusNotFound, jsonError{Error: "metrics are not enabled"})
		return
	}
	a.cfg.Metrics.ServeHTTP(w, r)
}

func (a *Admin) decision(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	raw := q.Get("url")
	if raw == "" {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: "url: missing query parameter (GET /v1/decision?url=https://example.com/path&agent=MyBot)"})
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: "url: want an absolute http or https URL"})
		return
	}
	var (
		agent    string
		purposes aipref.Set
		use      aipref.Use
	)
	if a.cfg.Defaults != nil {
		agent, purposes, use = a.cfg.Defaults()
	}
	if q.Has("agent") {
		agent = robots.CrawlerToken(q.Get("agent")) // a token, or a whole User-Agent, read as the proxy reads one
	}
	if q.Has("purpose") {
		// As the proxy's purposes header: a list, or "none" for no purposes.
		v := strings.Join(q["purpose"], ",")
		if v != "none" {
			if purposes, err = aipref.ParsePurposes([]string{v}); err != nil {
				writeJSON(w, http.StatusBadRequest, jsonError{Error: "purpose: " + err.Error() + " (or none)"})
				return
			}
		} else {
			purposes = 0
		}
	}
	if q.Has("content_use") {
		// "" (content_use=) declares none.
		if use, err = aipref.ParseUse(q.Get("content_use")); err != nil {
			writeJSON(w, http.StatusBadRequest, jsonError{Error: "content_use: " + err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, a.cfg.DecisionAnswer(r.Context(), u, agent, purposes, use))
}

// reload is POST /v1/reload: 200 with the result, 422 with it when the
// new configuration was refused (the running one is kept).
func (a *Admin) reload(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Reload == nil {
		writeJSON(w, http.StatusNotFound, jsonError{Error: "reload is not available here"})
		return
	}
	res, err := a.cfg.Reload()
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, res)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// ReloadResult is what a reload did: the answer of POST /v1/reload.
type ReloadResult struct {
	// Result is "ok" (the new settings are in force for new requests) or
	// "invalid" (the running settings are kept; Error says why).
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// Changed are the keys whose new values are in force; NeedsRestart
	// those whose change was not applied: they take effect at the next
	// start (the restart-only settings).
	Changed      []string `json:"changed"`
	NeedsRestart []string `json:"needs_restart,omitempty"`
	// RemovedDenies are the patterns of the sites: denies in force before
	// the reload and not after it.
	RemovedDenies []string `json:"removed_denies,omitempty"`
	Source        string   `json:"source"` // what asked for it: "SIGHUP" or "POST /v1/reload"
}

// EntryJSON is the answer of GET /v1/robots: an origin's cached
// robots.txt state.
type EntryJSON struct {
	Origin     string    `json:"origin"`
	URL        string    `json:"url"`
	Status     string    `json:"status"`
	HTTPStatus int       `json:"http_status,omitempty"`
	FinalURL   string    `json:"final_url,omitempty"`
	Error      string    `json:"error,omitempty"`
	Truncated  bool      `json:"truncated,omitempty"`
	Bytes      int       `json:"bytes"`
	FetchedAt  time.Time `json:"fetched_at"`
	Expires    time.Time `json:"expires"`
	AgeS       float64   `json:"age_s"`
	Fresh      bool      `json:"fresh"`
	Failures   int       `json:"failures,omitempty"`
	// GoodFetchedAt is set when a stale good copy is in force because
	// the latest fetch failed.
	GoodFetchedAt *time.Time `json:"good_fetched_at,omitempty"`
	// SHA256 is the hash of the robots.txt in force ("robotsgate audit
	// -document" prints it); ETag and LastModified its validators, and
	// Revalidated says the latest fetch was a 304 that kept it.
	SHA256       string      `json:"sha256,omitempty"`
	ETag         string      `json:"etag,omitempty"`
	LastModified string      `json:"last_modified,omitempty"`
	Revalidated  bool        `json:"revalidated,omitempty"`
	Groups       []GroupJSON `json:"groups"`
	Sitemaps     []string    `json:"sitemaps"`
}

// GroupJSON is one group of a robots.txt.
type GroupJSON struct {
	Agents      []string   `json:"agents"`
	CrawlDelayS float64    `json:"crawl_delay_s,omitempty"`
	Rules       []RuleJSON `json:"rules"`
}

// RuleJSON is one rule of a group.
type RuleJSON struct {
	Rule    string `json:"rule"` // e.g. "Disallow: /private"
	Allow   bool   `json:"allow"`
	Pattern string `json:"pattern"`
	Line    int    `json:"line"`
}

// newEntryJSON converts e as seen at now.
func newEntryJSON(e *enforce.Entry, now time.Time) EntryJSON {
	j := EntryJSON{
		Origin:     e.Key.Origin(),
		URL:        e.Key.URL(),
		Status:     string(e.Result.Status),
		HTTPStatus: e.Result.HTTPStatus,
		FinalURL:   e.Result.FinalURL,
		Error:      e.Result.Err,
		Truncated:  e.Result.Truncated,
		Bytes:      len(e.Result.Body),
		FetchedAt:  e.FetchedAt.UTC(),
		Expires:    e.Expires.UTC(),
		AgeS:       now.Sub(e.FetchedAt).Round(time.Millisecond).Seconds(),
		Fresh:      now.Before(e.Expires),
		Failures:   e.Failures,
		SHA256:     e.SHA256(),
		Groups:     []GroupJSON{},
		Sitemaps:   []string{},
	}
	if e.Good != nil {
		t := e.GoodAt.UTC()
		j.GoodFetchedAt = &t
	}
	if e.Result.Status == enforce.StatusOK {
		j.ETag, j.LastModified, j.Revalidated = e.Result.ETag, e.Result.LastModified, e.Result.NotModified
	}
	if p := e.Parsed; p != nil {
		for _, g := range p.Groups() {
			gj := GroupJSON{Agents: g.Agents, CrawlDelayS: g.CrawlDelay.Seconds(), Rules: make([]RuleJSON, 0, len(g.Rules))}
			for _, rl := range g.Rules {
				gj.Rules = append(gj.Rules, RuleJSON{Rule: rl.String(), Allow: rl.Allow, Pattern: rl.Pattern, Line: rl.Line})
			}
			j.Groups = append(j.Groups, gj)
		}
		if s := p.Sitemaps(); s != nil {
			j.Sitemaps = s
		}
	}
	return j
}
