package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/metrics"
	"github.com/robotsgate/robotsgate/robots"
)

// AdminEnforcer is what the admin API needs of an *enforce.Enforcer.
type AdminEnforcer interface {
	Decide(ctx context.Context, u *url.URL, agent string) enforce.Decision
	// DecideQuiet is Decide without counting a cache lookup in the
	// metrics: admin queries are not proxied requests.
	DecideQuiet(ctx context.Context, u *url.URL, agent string) enforce.Decision
	Entry(ctx context.Context, origin string) (*enforce.Entry, error)
	Cached(ctx context.Context, origin string) (*enforce.Entry, bool)
	Purge(ctx context.Context, origin string)
}

// AdminConfig configures NewAdmin.
type AdminConfig struct {
	Enforcer AdminEnforcer    // required
	Metrics  *metrics.Metrics // served at /metrics; nil: 404
	// Token is the bearer token of the admin API ("" = none). DELETE
	// (purge) always requires it: without a token it is refused with 403.
	// When Protect is set, every endpoint but /healthz and /readyz
	// requires it too.
	Token string
	// Protect is set when the admin API is reachable beyond loopback.
	Protect bool
	// Agent is the agent /v1/decision decides for when the query has no
	// agent parameter (the configured agent).
	Agent string
	// Ready reports whether robotsgate is ready to serve (listening, audit
	// log writable); nil means always ready.
	Ready func() error
	// Now is the clock for ages; nil means time.Now.
	Now func() time.Time
}

// Admin is robotsgate's admin HTTP API. Create it with NewAdmin.
//
//	GET    /healthz                        liveness: 200 "ok"
//	GET    /readyz                         200 "ready", or 503 with the reason
//	GET    /metrics                        Prometheus metrics
//	GET    /v1/decision?url=URL&agent=NAME the decision robotsgate would make now (JSON)
//	GET    /v1/robots?origin=ORIGIN        the cached robots.txt state (JSON); &fetch=1 fetches it when absent or stale
//	DELETE /v1/robots?origin=ORIGIN        forget the cached robots.txt (needs the token; 403 when none is configured)
type Admin struct {
	cfg   AdminConfig
	token [sha256.Size]byte
	mux   *http.ServeMux
}

// adminAllow returns the methods of the admin endpoint path, for 405
// answers; ok is false for unknown paths.
func adminAllow(path string) (allow string, ok bool) {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/v1/decision":
		return "GET, HEAD", true
	case "/v1/robots":
		return "GET, HEAD, DELETE", true
	}
	return "", false
}

// NewAdmin returns the admin API for cfg.
func NewAdmin(cfg AdminConfig) *Admin {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Admin{cfg: cfg, mux: http.NewServeMux()}
	if cfg.Token != "" {
		a.token = sha256.Sum256([]byte(cfg.Token))
	}
	a.mux.HandleFunc("GET /healthz", a.healthz)
	a.mux.HandleFunc("GET /readyz", a.readyz)
	a.mux.HandleFunc("GET /metrics", a.metrics)
	a.mux.HandleFunc("GET /v1/decision", a.decision)
	a.mux.HandleFunc("GET /v1/robots", a.robotsGet)
	a.mux.HandleFunc("DELETE /v1/robots", a.robotsDelete)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow, ok := adminAllow(r.URL.Path); ok {
			w.Header().Set("Allow", allow)
			writeJSON(w, http.StatusMethodNotAllowed, jsonError{Error: r.Method + " " + r.URL.Path + ": method not allowed (allowed: " + allow + ")"})
			return
		}
		writeJSON(w, http.StatusNotFound, jsonError{Error: "robotsgate admin: no such endpoint (try /healthz, /readyz, /metrics, /v1/decision, /v1/robots); " +
			"to use robotsgate as a proxy, set HTTP_PROXY/HTTPS_PROXY to this address"})
	})
	return a
}

// ServeHTTP implements http.Handler: it checks the bearer token, then
// routes.
func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete && a.cfg.Token == "" {
		// Purging robots.txt changes what is enforced: never without
		// admin auth, even on loopback.
		writeJSON(w, http.StatusForbidden, jsonError{Error: "admin API: DELETE is disabled: set admin_token (ROBOTSGATE_ADMIN_TOKEN) to enable purge"})
		return
	}
	open := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
	need := a.cfg.Token != "" && (r.Method == http.MethodDelete || (a.cfg.Protect && !open))
	if need && !a.authorized(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="robotsgate-admin"`)
		writeJSON(w, http.StatusUnauthorized, jsonError{Error: "admin API: missing or wrong bearer token"})
		return
	}
	a.mux.ServeHTTP(w, r)
}

// authorized reports whether h is "Bearer <token>" with the right token,
// comparing digests in constant time.
func (a *Admin) authorized(h string) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
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
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (a *Admin) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
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
	a.cfg.Metrics.Handler().ServeHTTP(w, r)
}

// DecisionJSON is the answer of GET /v1/decision: the fields a 403 of
// robotsgate carries.
type DecisionJSON struct {
	Allowed     bool        `json:"allowed"`
	Reason      string      `json:"reason"`
	Detail      string      `json:"detail,omitempty"`
	URL         string      `json:"url"`
	Origin      string      `json:"origin"`
	Agent       string      `json:"agent"` // "*" when no agent was known
	Group       string      `json:"group,omitempty"`
	Rule        string      `json:"rule,omitempty"`
	Line        int         `json:"line,omitempty"`
	CrawlDelayS float64     `json:"crawl_delay_s,omitempty"`
	RetryAfterS float64     `json:"retry_after_s,omitempty"`
	Robots      *RobotsJSON `json:"robots,omitempty"`
}

// RobotsJSON describes the robots.txt copy a decision used.
type RobotsJSON struct {
	URL        string    `json:"url"`
	Status     string    `json:"status"`
	HTTPStatus int       `json:"http_status,omitempty"`
	FetchedAt  time.Time `json:"fetched_at"`
	AgeS       float64   `json:"age_s"`
	Stale      bool      `json:"stale,omitempty"`
	// StaleReason says why a stale copy decided: an enforce.StaleReason.
	StaleReason string `json:"stale_reason,omitempty"`
}

// NewDecisionJSON converts d.
func NewDecisionJSON(d enforce.Decision) DecisionJSON {
	j := DecisionJSON{
		Allowed:     d.Allowed,
		Reason:      string(d.Reason),
		Detail:      d.Detail,
		URL:         d.URL,
		Origin:      d.Origin,
		Agent:       agentName(d.Agent),
		Group:       d.Group,
		Rule:        d.Rule,
		Line:        d.Line,
		CrawlDelayS: d.CrawlDelay.Seconds(),
		RetryAfterS: d.RetryAfter.Seconds(),
	}
	j.Robots = newRobotsJSON(d)
	return j
}

// newRobotsJSON describes the robots.txt copy d used; nil when d did not
// consult robots.txt. 403 bodies (Refuse) carry it too.
func newRobotsJSON(d enforce.Decision) *RobotsJSON {
	if d.RobotsStatus == "" {
		return nil
	}
	j := &RobotsJSON{
		URL:        d.Origin + "/robots.txt",
		Status:     string(d.RobotsStatus),
		HTTPStatus: d.RobotsHTTPStatus,
		FetchedAt:  d.RobotsFetchedAt.UTC(),
		AgeS:       d.RobotsAge.Round(time.Millisecond).Seconds(),
		Stale:      d.RobotsStale,
	}
	j.StaleReason = string(d.RobotsStaleReason)
	return j
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
	agent := a.cfg.Agent
	if q.Has("agent") {
		agent = q.Get("agent")
		if strings.ContainsAny(agent, "/ ();") { // a whole User-Agent value: decided as the proxy decides one
			agent = robots.CrawlerToken(agent)
		}
	}
	writeJSON(w, http.StatusOK, NewDecisionJSON(a.cfg.Enforcer.DecideQuiet(r.Context(), u, agent)))
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
	GoodFetchedAt *time.Time  `json:"good_fetched_at,omitempty"`
	Groups        []GroupJSON `json:"groups"`
	Sitemaps      []string    `json:"sitemaps"`
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

// NewEntryJSON converts e as seen at now.
func NewEntryJSON(e *enforce.Entry, now time.Time) EntryJSON {
	j := EntryJSON{
		Origin:     e.Origin,
		URL:        e.Origin + "/robots.txt",
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
		Groups:     []GroupJSON{},
		Sitemaps:   []string{},
	}
	if e.Good != nil {
		t := e.GoodAt.UTC()
		j.GoodFetchedAt = &t
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

// originParam returns the normalised origin of the query's origin
// parameter, which may be an origin or any URL of it.
func originParam(r *http.Request) (string, error) {
	raw := r.URL.Query().Get("origin")
	if raw == "" {
		return "", errors.New("origin: missing query parameter (e.g. ?origin=https://example.com)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("origin: want scheme://host[:port], e.g. https://example.com")
	}
	o, err := enforce.Origin(u)
	if err != nil {
		return "", errors.New("origin: want scheme://host[:port], e.g. https://example.com")
	}
	return o, nil
}

func (a *Admin) robotsGet(w http.ResponseWriter, r *http.Request) {
	origin, err := originParam(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: err.Error()})
		return
	}
	var e *enforce.Entry
	if fetch, _ := strconv.ParseBool(r.URL.Query().Get("fetch")); fetch {
		if e, err = a.cfg.Enforcer.Entry(r.Context(), origin); err != nil {
			writeJSON(w, http.StatusGatewayTimeout, jsonError{Error: "fetching " + origin + "/robots.txt: " + err.Error()})
			return
		}
	} else {
		var ok bool
		if e, ok = a.cfg.Enforcer.Cached(r.Context(), origin); !ok {
			writeJSON(w, http.StatusNotFound, jsonError{Error: origin + "/robots.txt is not cached (add &fetch=1 to fetch it)"})
			return
		}
	}
	writeJSON(w, http.StatusOK, NewEntryJSON(e, a.cfg.Now()))
}

// purgeJSON is the answer of DELETE /v1/robots.
type purgeJSON struct {
	Origin    string `json:"origin"`
	Purged    bool   `json:"purged"`     // always true: the entry is gone
	WasCached bool   `json:"was_cached"` // an entry existed
}

func (a *Admin) robotsDelete(w http.ResponseWriter, r *http.Request) {
	origin, err := originParam(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: err.Error()})
		return
	}
	_, was := a.cfg.Enforcer.Cached(r.Context(), origin)
	a.cfg.Enforcer.Purge(r.Context(), origin)
	writeJSON(w, http.StatusOK, purgeJSON{Origin: origin, Purged: true, WasCached: was})
}

// adminRoutes creates the admin API. Without admin_listen it answers
// the requests addressed to the proxy port itself (goproxy's
// NonproxyHandler); with admin_listen it is served there (ServeAdmin)
// and the proxy port keeps only /healthz.
func (s *Server) adminRoutes() {
	protect := !access.IsLoopbackAddr(s.cfg.Listen)
	if s.cfg.AdminListen != "" {
		protect = !access.IsLoopbackAddr(s.cfg.AdminListen)
	}
	s.admin = NewAdmin(AdminConfig{
		Enforcer: s.enf,
		Metrics:  s.metrics,
		Token:    s.cfg.AdminToken,
		Protect:  protect,
		Agent:    s.cfg.Agent,
		Ready:    s.ready,
		Now:      s.clock.Now,
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
