package proxy

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/politeness"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/egress"
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
	signers *signers
	// egress is the egress policy: the destinations connected to (egressdial.go).
	egress *egress.Policy
}

// newLive builds the settings of cfg: it reads the credentials file, and
// fails (leaving the running settings alone) when it cannot.
func (s *Server) newLive(cfg config.Config) (*live, error) {
	l := &live{cfg: cfg, ports: make(map[string]bool), egress: newEgressPolicy(cfg)}
	l.agents = newAgents(cfg.Agent, cfg.AgentHeader, cfg.AllowAgentOverride).withPurposes(cfg.Purposes, cfg.Usage.PurposeHeader)
	l.agents.contentUse = cfg.ContentUse
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
	if l.signers, err = newSigners(&cfg, a.Identities(), s.clock.Now); err != nil {
		return nil, err
	}
	if err := checkPaymentIdentities(&cfg, a.Identities()); err != nil { // (payment.go)
		return nil, err
	}
	s.warnTunnelGaps(&cfg, a.Identities()) // what tunnel mode cannot check (tunnelpolicy.go)
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
