package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/egress"
	"github.com/robotsgate/robotsgate/proxy/pay"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// reloader serialises reloads of a Server's configuration.
type reloader struct {
	mu   sync.Mutex
	load func() (config.Config, error) // Deps.Load
}

// ReloadResult is what a reload did: the answer of POST /v1/reload
// ([admin.ReloadResult]), and what the log line of a reload says besides.
type ReloadResult struct {
	admin.ReloadResult
	// The number of denies in force before and after, for the log.
	deniesBefore, deniesAfter int
}

// Results of a reload ([ReloadResult.Result], and the result label of
// robotsgate_config_reloads_total).
const (
	ReloadOK      = "ok"
	ReloadInvalid = "invalid"
)

// errNoLoader is the error of a reload on a Server given no [Deps.Load].
var errNoLoader = errors.New("this robotsgate cannot reload its configuration (no loader)")

// errEmptyFile is the error of a reload whose configuration file holds no
// setting, without reload_allow_empty.
var errEmptyFile = errors.New("the configuration file holds no setting (empty, or caught while it was rewritten): refused, the running configuration is kept; " +
	"replace the file atomically (write a new file, then rename it over the old), or set reload_allow_empty (flag or environment) to apply an empty file")

// Reload reads the configuration again ([Deps.Load]) and puts the settings
// that may change at run time in force for the requests that start from
// now on; requests under way keep theirs, and listeners, the robots.txt
// cache and the politeness state are untouched. Settings that only a
// restart changes are compared and named in NeedsRestart, not applied. A
// configuration that fails to load or validate, or whose credentials
// file cannot be read, keeps the running settings: the result is
// "invalid" with the reason in one line, and the error is returned.
// source says what asked for the reload, for the log and audit record.
// Each reload is logged, audited and counted.
func (s *Server) Reload(source string) (ReloadResult, error) {
	s.reload.mu.Lock()
	defer s.reload.mu.Unlock()
	res := ReloadResult{ReloadResult: admin.ReloadResult{Source: source, Changed: []string{}}}
	err := errNoLoader
	var cfg config.Config
	if s.reload.load != nil {
		cfg, err = s.reload.load()
	}
	if err == nil {
		err = s.apply(cfg, &res)
	}
	res.Result = ReloadOK
	if err != nil {
		res.Result, res.Error = ReloadInvalid, oneLine(err.Error())
		res.Changed, res.NeedsRestart = []string{}, nil
	}
	s.metrics.ConfigReload(res.Result)
	s.recordReload(res)
	return res, err
}

// apply puts the run-time settings of cfg in force, filling in res.
func (s *Server) apply(cfg config.Config, res *ReloadResult) error {
	old := s.live.Load()
	if cfg.EmptyFile() && !cfg.ReloadAllowEmpty {
		return errEmptyFile
	}
	merged := config.WithRestartOnly(cfg, s.cfg)
	if err := merged.Validate(); err != nil {
		return fmt.Errorf("config: %w (with the settings that need a restart kept as they run)", err)
	}
	l, err := s.newLive(merged)
	if err != nil {
		return err
	}
	res.Changed, res.NeedsRestart = config.Changes(old.cfg, cfg)
	res.RemovedDenies = removedDenies(old.cfg.Sites, merged.Sites)
	res.deniesBefore, res.deniesAfter = countDenies(old.cfg.Sites), countDenies(merged.Sites)
	s.live.Store(l)
	return nil
}

// removedDenies returns the patterns of the denies of before that after
// lacks.
func removedDenies(before, after []config.Site) []string {
	kept := make(map[string]bool)
	for _, st := range after {
		if st.Policy == config.SitePolicyDeny {
			kept[st.Origin+"|"+st.Host+"|"+st.Domain] = true
		}
	}
	var gone []string
	for _, st := range before {
		if st.Policy == config.SitePolicyDeny && !kept[st.Origin+"|"+st.Host+"|"+st.Domain] {
			gone = append(gone, st.Match)
		}
	}
	return gone
}

// countDenies returns the number of denies of sites.
func countDenies(sites []config.Site) int {
	n := 0
	for _, st := range sites {
		if st.Policy == config.SitePolicyDeny {
			n++
		}
	}
	return n
}

// recordReload logs and audits the reload res.
func (s *Server) recordReload(res ReloadResult) {
	if res.Result == ReloadOK {
		ev := s.log.Info().Str("source", res.Source).Strs("changed", res.Changed)
		if len(res.NeedsRestart) > 0 {
			ev = ev.Strs("needs_restart", res.NeedsRestart)
		}
		ev.Msg("configuration reloaded")
		if n := len(res.RemovedDenies); n > 0 {
			s.log.Warn().Str("source", res.Source).Int("denies_removed", n).Int("denies_before", res.deniesBefore).
				Int("denies_after", res.deniesAfter).Strs("removed", res.RemovedDenies).
				Msg("the reload removed site denies: requests to those sites are no longer refused")
		}
	} else {
		s.log.Error().Str("source", res.Source).Str("error", res.Error).Msg("configuration reload refused; the running configuration is kept")
	}
	s.record(audit.Event{Kind: audit.KindConfigReload, Reason: res.Result, Method: res.Source, Detail: reloadDetail(&res),
		Mode: string(s.live.Load().cfg.Mode)})
}

// reloadDetail is the detail of the reload's audit record: its error, or
// what changed, what needs a restart and which site denies went, or "no
// change" when the file said what was running.
func reloadDetail(res *ReloadResult) string {
	if res.Error != "" {
		return res.Error
	}
	var parts []string
	for _, p := range []struct {
		label string
		keys  []string
	}{{"changed: ", res.Changed}, {"needs a restart: ", res.NeedsRestart}, {"site denies removed: ", res.RemovedDenies}} {
		if len(p.keys) > 0 {
			parts = append(parts, p.label+strings.Join(p.keys, ","))
		}
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

// oneLine joins the lines of s with "; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// live is what a reload replaces: the settings of the per-request steps,
// all built from one [config.Config] and never changed afterwards. The
// Server holds the current one in an atomic pointer ([Server.live]); each
// request takes the one current when it enters ([Server.enter]) and keeps
// it to its end, so that a reload never changes the rules of a request
// under way, and a request never sees half of an old configuration and
// half of a new one.
type live struct {
	cfg    config.Config
	agents *access.Agents
	// request and response are the steps of this configuration, in
	// order, which every request runs where [Server.install] says; the
	// response steps see only a response from the origin ([fromOrigin]).
	// [Server.newSteps] builds them.
	request  []requestStep
	response []responseStep
	robots   *robotsStep     // the robots step, also of tunnel mode and /v1/decision
	tdm      *tdmrepStep     // TDMRep (tdmrep.go), also of /v1/decision
	lic      *licenseStep    // RSL licenses (license.go), also of /v1/decision
	ports    map[string]bool // https.allowed_ports
	// access is the access control (client networks, credentials) around
	// the rest of the handler chain ([Server.inner]); acl is its rules.
	access http.Handler
	acl    *access.Access
	// signers sign forwarded requests; nil when nothing signs (sign.go).
	signers *signing.Signers
	// egress is the egress policy: the destinations connected to (transport.go).
	egress *egress.Policy
}

// newLive builds the settings of cfg: it reads the credentials file, and
// fails (leaving the running settings alone) when it cannot.
func (s *Server) newLive(cfg config.Config) (*live, error) {
	l := &live{cfg: cfg, ports: make(map[string]bool), egress: newEgressPolicy(cfg)}
	l.agents = access.NewAgents(&cfg)
	if err := s.newSteps(l); err != nil {
		return nil, err
	}
	for _, p := range cfg.HTTPS.AllowedPorts { // validated: never empty
		l.ports[strconv.Itoa(p)] = true
	}
	a, err := access.New(access.Options{Credentials: cfg.Auth.Credentials, CredentialsFile: cfg.Auth.CredentialsFile,
		AllowCIDRs: cfg.Auth.AllowCIDRs, Denied: s.accessDenied})
	if err != nil {
		return nil, err
	}
	l.access, l.acl = a.Wrap(s.inner), a
	if l.signers, err = signing.NewSigners(&cfg.Signing, a.Identities(), s.clock.Now); err != nil {
		return nil, err
	}
	if err := pay.CheckIdentities(&cfg, a.Identities()); err != nil { // (proxy/pay)
		return nil, err
	}
	s.warnTunnelGaps(&cfg, a.Identities()) // what tunnel mode cannot check (tunnel.go)
	s.signFetches(&cfg, l.signers)         // robotsgate's own fetches: the keys of the settings about to be in force (sign.go)
	if a.RequiresCredentials() || a.Networks() > 0 {
		s.log.Info().Bool("credentials", a.RequiresCredentials()).Int("allow_cidrs", a.Networks()).Msg("proxy access control on")
	}
	return l, nil
}

// settings returns the settings the request of st is served with: those
// current when it entered.
func (s *Server) settings(st *requestState) *live {
	if st.Live == nil {
		st.Live = s.live.Load()
	}
	return st.Live
}

// serveLive is the handler of the proxy port: the current access control,
// then the rest of the chain.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	s.live.Load().access.ServeHTTP(w, r)
}

// newPoliteness builds the politeness policy of cfg. pacer and pauses may
// be nil (in-memory, this process only). In report mode the policy
// decides without acting ([politeness.Config.Report]).
func newPoliteness(cfg config.Config, pacer politeness.Pacer, pauses politeness.Pauses, slots *politeness.Slots, clock enforce.Clock,
	log zerolog.Logger) (*politeness.Politeness, error) {
	p := cfg.Politeness
	pol, err := politeness.New(politeness.Config{
		Clock:            clock,
		Pacer:            pacer,
		Pauses:           pauses,
		Log:              log,
		IgnoreCrawlDelay: p.CrawlDelay == config.CrawlDelayIgnore,
		DefaultDelay:     p.DefaultCrawlDelay,
		MaxDelay:         p.MaxCrawlDelay,
		MaxWait:          p.MaxQueueWait,
		BackoffStart:     p.BackoffStart,
		BackoffMax:       p.BackoffMax,
		MaxConcurrency:   p.MaxConcurrency,
		Slots:            slots,
		Report:           cfg.Mode == config.ModeReport,
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: politeness: %w", err)
	}
	return pol, nil
}
