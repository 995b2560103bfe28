package proxy

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/elazarl/goproxy"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
)

// live is what a reload replaces: the settings of the per-request steps,
// all built from one [config.Config] and never changed afterwards. The
// Server holds the current one in an atomic pointer ([Server.live]); each
// request takes the one current when it enters ([Server.enter]) and keeps
// it to its end, so that a reload never changes the rules of a request
// under way, and a request never sees half of an old configuration and
// half of a new one.
type live struct {
	cfg    config.Config
	agents *agents
	// The steps, as pointers: picking one per request as a step
	// interface then allocates nothing.
	decide *robotsStep
	pacing *pacing
	tags   *robotTagStep
	usage  *usageStep
	whole  *wholeStep
	tdm    *tdmStep        // TDMRep (tdmrep.go)
	lic    *licenseStep    // RSL licenses (license.go)
	ports  map[string]bool // https.allowed_ports
	// access is the access control (client networks, credentials) around
	// the rest of the handler chain ([Server.inner]); acl is its rules.
	access http.Handler
	acl    *access.Access
	// signers sign forwarded requests; nil when nothing signs (signstep.go).
	signers *signers
}

// newLive builds the settings of cfg: it reads the credentials file, and
// fails (leaving the running settings alone) when it cannot.
func (s *Server) newLive(cfg config.Config) (*live, error) {
	pol, err := newPoliteness(cfg, s.pacer, s.pauses, s.slots, s.clock, s.log)
	if err != nil {
		return nil, err
	}
	l := &live{cfg: cfg, ports: make(map[string]bool)}
	l.agents = newAgents(cfg.Agent, cfg.AgentHeader, cfg.AllowAgentOverride).withPurposes(cfg.Purposes, cfg.Usage.PurposeHeader)
	l.agents.contentUse = cfg.ContentUse
	unknown := enforce.UnknownAllow
	if cfg.Usage.Unknown == "deny" {
		unknown = enforce.UnknownDeny
	}
	l.decide = &robotsStep{enf: s.enf, maxURLBytes: cfg.MaxURLBytes, agents: l.agents, report: cfg.Mode == config.ModeReport,
		auditAll: cfg.Audit == config.AuditAll, log: s.log, sites: cfg.Sites, unknown: unknown}
	l.pacing = &pacing{polite: pol, metrics: s.metrics, life: s.life, maxConcurrency: cfg.Politeness.MaxConcurrency, log: s.log}
	tags, whole := newRobotTagStep(cfg.RobotTags, cfg.Mode), newWholeStep(&cfg)
	l.tags, l.whole = &tags, &whole
	l.usage = &usageStep{enforce: cfg.Usage.Response == config.UsageResponseEnforce && cfg.Mode != config.ModeReport}
	tdm := newTDMStep(&cfg, s.enf)
	l.tdm = &tdm
	lic := newLicenseStep(&cfg, s.enf)
	l.lic = &lic
	for _, p := range cfg.HTTPS.AllowedPorts { // validated: never empty
		l.ports[strconv.Itoa(p)] = true
	}
	a, err := access.New(access.Options{Credentials: cfg.Auth.Credentials, CredentialsFile: cfg.Auth.CredentialsFile,
		AllowCIDRs: cfg.Auth.AllowCIDRs, Denied: s.accessDenied})
	if err != nil {
		return nil, err
	}
	l.access, l.acl = a.Wrap(s.inner), a
	if l.signers, err = newSigners(&cfg, a.Identities(), s.clock.Now); err != nil {
		return nil, err
	}
	s.signFetches(&cfg, l.signers) // robotsgate's own fetches: the keys of the settings about to be in force (signstep.go)
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

// liveRequest is a request step of the request's settings, picked by pick.
type liveRequest struct {
	s    *Server
	pick func(*live) requestStep
}

func (lr liveRequest) onRequest(r *http.Request, ctx *goproxy.ProxyCtx, st *requestState) outcome {
	return lr.pick(lr.s.settings(st)).onRequest(r, ctx, st)
}

// liveResponse is a response step of the request's settings, picked by
// pick.
type liveResponse struct {
	s    *Server
	pick func(*live) responseStep
}

func (lr liveResponse) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx, st *requestState) (*http.Response, outcome) {
	return lr.pick(lr.s.settings(st)).onResponse(resp, ctx, st)
}

// liveSteps are the steps whose settings a reload may change, each read
// from the request's settings.
type liveSteps struct {
	decide, tdm, pacing, whole                  requestStep
	pacingResp, wholeResp, tags, usage, tdmResp responseStep
	lic                                         requestStep  // RSL licenses (license.go)
	licResp                                     responseStep // X-Robotsgate-License (license.go)
}

func (s *Server) liveSteps() liveSteps {
	return liveSteps{
		decide:     liveRequest{s, func(l *live) requestStep { return l.decide }},
		pacing:     liveRequest{s, func(l *live) requestStep { return l.pacing }},
		whole:      liveRequest{s, func(l *live) requestStep { return l.whole }},
		pacingResp: liveResponse{s, func(l *live) responseStep { return l.pacing }},
		wholeResp:  liveResponse{s, func(l *live) responseStep { return l.whole }},
		tags:       liveResponse{s, func(l *live) responseStep { return l.tags }},
		usage:      liveResponse{s, func(l *live) responseStep { return l.usage }},
		tdm:        liveRequest{s, func(l *live) requestStep { return l.tdm }},
		tdmResp:    liveResponse{s, func(l *live) responseStep { return l.tdm }},
		lic:        liveRequest{s, func(l *live) requestStep { return l.lic }},
		licResp:    liveResponse{s, func(l *live) responseStep { return l.lic }},
	}
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
