package proxy

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/audit"
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
