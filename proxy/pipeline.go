package proxy

import (
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/admin"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/conns"
	"github.com/robotsgate/robotsgate/proxy/metrics"
)

// The request pipeline. A proxied request passes the request steps in
// order; the first that refuses it (an outcome audited as
// audit.DecisionBlocked) answers it, and the rest are skipped: the origin
// sees nothing. A forwarded request's response, and robotsgate's own
// answers, then pass every response step in order. Steps never build
// audit records or answers: they return an outcome, which settle
// (refuse.go) carries out. Per-request state is a *requestState in
// goproxy's ctx.UserData; the adapters between goproxy and the steps are
// engine.go's. The small steps that frame every request (inflightStep,
// upstreamFailureStep, finishStep) are here too, with the lists.

// requestStep is one step of the request side. r is st.Req; a step that
// replaces the request (another context) sets st.Req to the new one.
type requestStep interface {
	onRequest(r *http.Request, st *requestState) outcome
}

// responseStep is one step of the response side. resp is never nil
// after [upstreamFailureStep.onResponse], the first step.
type responseStep interface {
	onResponse(resp *http.Response, st *requestState) (*http.Response, outcome)
}

// ServeHTTP handles one client request: proxied ones (absolute URL or
// CONNECT) go through the hooks; others (GET /healthz, admin) to the
// server's own routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// install registers the steps, in order, and the CONNECT handler. To add
// a step, write its file and add it to one of the lists below, or, for a
// step whose settings a reload may change, to those of [Server.newSteps]
// (below).
func (s *Server) install() error {
	p := s.proxy
	if err := s.installHTTPS(); err != nil { // CONNECT: port allow-list, MITM / tunnel (connect.go)
		return err
	}
	s.installTransports() // dialers: own addresses refused, pinned addresses only (transport.go)
	inflight := inflightStep{m: s.metrics}
	s.steps = steps{
		request: []requestStep{
			inflight,                         // in-flight count, ended on the response side
			readmitStep{},                    // MITM session after a reload: its CONNECT's access revoked → 403, session ended (readmit.go)
			canonicalStep{},                  // one spelling of host and port, dialed as decided; unmappable → 400 (destination.go)
			destinationStep{&s.self, s.pins}, // own address → 403, MITM Host ≠ CONNECT target → 421 (destination.go)
			hopHeadersStep{},                 // hop-by-hop request headers
			// then the request's settings' steps (live.request, [Server.newSteps]):
			// site exceptions and robots.txt, TDMRep, pacing, whole responses
		},
		lastRequest: []requestStep{
			signStep{s: s}, // Web Bot Auth signature, once nothing can refuse the request any more (sign.go)
			&s.fwd,         // robot-tag scan and pooled body copy as the response arrives (forward.go); last
		},
		// (forwarding happens here, in goproxy, with s.tr)
		response: []responseStep{
			upstreamFailureStep{log: s.log}, // resp == nil → 502/504; first
			hopHeadersStep{},                // hop-by-hop response headers
			// then, for a response from the origin, the request's settings' steps
			// (live.response, [Server.newSteps]): pacing, whole, robot tags, usage, TDMRep
		},
		lastResponse: []responseStep{
			inflight,       // decisions, upstream errors, in-flight
			s.vol,          // volumeStep: requests, status classes and bytes per origin, for the crawl report (volume.go)
			finishStep{},   // report-mode headers, streaming
			holdHeadStep{}, // a response with a body inside an MITM session: head and body in one write (forward.go)
			http10Step{},   // HTTP/1.0 clients inside MITM sessions (forward.go); last
		},
	}
	s.hook(p) // the steps' adapters to goproxy's hooks (engine.go)

	if err := s.installAround(p); err != nil {
		return err
	}
	// ---- requests addressed to robotsgate itself ----
	s.mux.HandleFunc("GET /healthz", admin.Healthz)
	s.adminRoutes() // admin API and /metrics, here or on admin_listen (wiring.go)
	return nil
}

// installAround wraps the goproxy pipeline p in what runs around every
// proxied request (outermost last) and makes it the Server's handler.
func (s *Server) installAround(p http.Handler) error {
	h := s.https.hijacks.Wrap(p)                  // hijacked CONNECT connections, for Shutdown
	h = conns.LimitsOf(s.cfg.Client).BoundBody(h) // plain-HTTP request bodies, bounded as in CONNECT sessions (conns.Limits.BoundBody)
	s.inner = h
	// proxy auth / client CIDRs, and every setting a reload changes (reload.go):
	l, err := s.newLive(s.cfg)
	if err != nil {
		return err
	}
	s.live.Store(l)
	h = http.HandlerFunc(s.serveLive)
	s.handler = s.life.Wrap(h) // running handlers, waited for by Shutdown (conns.Lifetime)
	return nil
}

// newSteps builds the steps of l's configuration, the ones a reload may
// change, and lists them in order. A step of its own file is one line
// here.
func (s *Server) newSteps(l *live) error {
	cfg := &l.cfg
	pol, err := newPoliteness(*cfg, s.pacer, s.pauses, s.slots, s.clock, s.log)
	if err != nil {
		return err
	}
	l.robots = &robotsStep{enf: s.enf, maxURLBytes: cfg.MaxURLBytes, agents: l.agents, report: cfg.Mode == config.ModeReport,
		auditAll: cfg.Audit == config.AuditAll, log: s.log, sites: cfg.Sites, unknownDeny: cfg.Usage.Unknown == config.UsageUnknownDeny}
	tdm := newTDMStep(cfg, s.enf)                                                                                               // (tdmrep.go)
	lic := newLicenseStep(cfg, s.enf)                                                                                           // (license.go)
	pc := &pacingStep{polite: pol, metrics: s.metrics, life: s.life, maxConcurrency: cfg.Politeness.MaxConcurrency, log: s.log} // (pacing.go)
	whole := newWholeStep(cfg)                                                                                                  // (whole.go)
	tags := newRobotTagStep(cfg.RobotTags, cfg.Mode)                                                                            // (robottags.go)
	usage := &usageStep{enforce: cfg.Usage.Response == config.UsageResponseEnforce && cfg.Mode != config.ModeReport}            // (usage.go)
	l.tdm, l.lic = &tdm, &lic
	pay := newPaymentStep(cfg, s, pol) // (payment.go)
	l.request = []requestStep{
		l.robots, // robotsStep.onRequest: site exceptions, robots.txt decision: 403, or let through
		l.tdm,    // tdmrepStep.onRequest: tdmrep.json reserves the URL: 403 tdm-reserved, or audit
		l.lic,    // licenseStep.onRequest: RSL license prohibits a purpose or needs a token: 403 license-*, or audit
		pc,       // pacingStep.onRequest: paused origin → 503, crawl-delay wait or 429
		&whole,   // wholeStep.onRequest: while a response step enforces, no Range, Accept-Encoding the scan decodes
		pay,      // paymentStep.onRequest: pay mode: client price headers removed, crawler-max-price to an origin that quoted; last
	}
	l.response = []responseStep{
		pay,    // paymentStep.onResponse: a 402's quote paid by a signed retry, or passed through and audited; first
		pc,     // pacingStep.onResponse: 503/429 + Retry-After pause the origin, 2xx resumes
		&whole, // wholeStep.onResponse: partial or undecodable responses: 403 when enforcing
		&tags,  // robotTagsStep.onResponse: X-Robots-Tag / meta robots: annotate, or 403
		usage,  // usageStep.onResponse: Content-Usage / noai: X-Robotsgate-Usage, or 403
		l.tdm,  // tdmrepStep.onResponse: tdm-reservation header / meta: X-Robotsgate-TDM, or 403
		l.lic,  // licenseStep.onResponse: X-Robotsgate-License
	}
	return nil
}

// steps are the steps every request takes whatever its settings, around
// those of its settings ([live]).
type steps struct {
	request      []requestStep  // first
	lastRequest  []requestStep  // after the settings' steps
	response     []responseStep // first
	lastResponse []responseStep // after the settings' steps
}

// inflightStep is the step that counts a request in flight, and, on the
// response side, its decision and upstream failure; it ends the in-flight
// count there, which every request's response side reaches. In flight
// thus means "between arrival and response headers": deciding, waiting
// for a crawl-delay slot or for the origin.
//
// State: reads the verdict (Decision, Decided); writes nothing
// ([requestState]).
type inflightStep struct{ m *metrics.Metrics }

func (f inflightStep) onRequest(*http.Request, *requestState) outcome {
	f.m.RequestStarted()
	return outcome{}
}

func (f inflightStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	f.m.RequestDone()
	if st.Decided {
		f.m.Decision(st.Decision)
	}
	if st.Err != nil {
		f.m.UpstreamError()
	}
	return resp, outcome{}
}

// finishStep is the response step that marks forwarded responses that report
// mode let through although they would have been blocked, and makes
// bodies of unknown length stream to the client as they arrive.
//
// State: reads the verdict (Decision, Decided, Answered); writes nothing
// ([requestState]).
type finishStep struct{}

func (finishStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if resp != nil && resp.ContentLength < 0 && resp.Body != nil && resp.Body != http.NoBody {
		// goproxy flushes after every write only when the response header
		// says chunked; Go's client moves that into resp.TransferEncoding,
		// so without this a slow stream (SSE, long poll) would sit in the
		// server's write buffer. net/http applies (or, for HTTP/1.0
		// clients, drops) the chunked coding itself.
		resp.Header.Set("Transfer-Encoding", "chunked")
	}
	if resp != nil && st.Decided && !st.Decision.Allowed && !st.Answered {
		answer.SetReportHeaders(resp.Header, st.Decision)
	}
	return resp, outcome{}
}

// upstreamFailureStep is the first response step: it answers a request whose
// forwarding failed with a 502 (504 on timeouts) that names the origin
// and the error ([upstreamOutcome]), instead of goproxy's bare 500.
//
// State: reads the caller (Agent) and the verdict (Answered); writes the
// verdict (Answered through settle) ([requestState]).
type upstreamFailureStep struct{ log zerolog.Logger }

func (u upstreamFailureStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if resp != nil {
		return resp, outcome{}
	}
	err := st.Err
	if err == nil {
		err = errors.New("no response")
	}
	return nil, forwardFailed(u.log, st.Req, st, err)
}

// forwardFailed logs, at warn, that forwarding r failed with err, and
// returns the outcome that answers it.
func forwardFailed(log zerolog.Logger, r *http.Request, st *requestState, err error) outcome {
	o := upstreamOutcome(r, st.Agent, err)
	log.Warn().Str("origin", o.d.Origin).Str("url", o.d.URL).Str("error", enforce.RedactURLsIn(err.Error())).
		Int("status", o.status).Msg("forwarding failed")
	return o
}
