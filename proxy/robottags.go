package proxy

import (
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// maxTagDetail bounds the detail text of robot-tag audit records and
// refusals; headers and meta elements come from the origin.
const maxTagDetail = 1024

// tagScan is what one response's robot tags say ([bodyscan.Tags]).
type tagScan = bodyscan.Tags

// tagEvent is what [robotTagsStep.onResponse] found and did with a response whose
// robot tags say it must not be kept.
type tagEvent struct {
	tagScan
	Matched []string // the robot_tags.deny entries that matched
	Refused bool     // enforce mode: the response was replaced by a 403
}

// detail formats ev for an audit record or a refusal body, e.g.
// "deny noindex; X-Robots-Tag: mandelbot: noindex; meta: nofollow".
func (ev *tagEvent) detail() string {
	var sb strings.Builder
	sb.WriteString("deny " + strings.Join(ev.Matched, ", "))
	list := func(label string, ds []robottag.Directive) {
		if len(ds) == 0 {
			return
		}
		sb.WriteString("; " + label + ": ")
		for i, d := range ds {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(d.String())
		}
	}
	list("X-Robots-Tag", ev.Header)
	list("meta", ev.Meta)
	if ev.NotScanned != "" {
		sb.WriteString("; meta not scanned: " + ev.NotScanned)
	}
	return answer.BoundedLine(sb.String(), maxTagDetail)
}

// robotTagOutcome is the outcome of the robot tags of a forwarded response to
// req, for the crawler whose product token is agent.
//
// It acts on every final response ([bodyscan.Applies]) and only in modes
// annotate and enforce (any mode other than off and enforce is treated as
// annotate). It reads the
// response's robot tags ([bodyscan.RobotTags], unless an earlier step already
// did) and asks [robottag.Verdict] whether they say "do not keep" for
// agent, with cfg.Deny (nil means [robottag.DefaultDeny]). When they do
// not, ev is nil and the outcome is zero. When they do:
//
//   - annotate: resp gets answer.HeaderIndex listing the matched deny entries,
//     its body intact, and the outcome audits it as reported;
//   - enforce: resp's body is closed unread (beyond the scan) and the
//     outcome is a 403 refusal (reason robot-tag) carrying answer.HeaderIndex.
//
// ev then describes what was found.
func robotTagOutcome(req *http.Request, resp *http.Response, agent string, cfg config.RobotTagsConfig) (ev *tagEvent, o outcome) {
	if cfg.Mode == config.RobotTagsOff || resp == nil || !bodyscan.Applies(resp.StatusCode) {
		return nil, outcome{}
	}
	s := bodyscan.RobotTags(resp, cfg)
	deny := cfg.Deny
	if deny == nil {
		deny = robottag.DefaultDeny()
	}
	all := append(append([]robottag.Directive(nil), s.Header...), s.Meta...)
	denied, matched := robottag.Verdict(all, agent, deny)
	if !denied {
		return nil, outcome{}
	}
	ev = &tagEvent{tagScan: *s, Matched: matched}
	index := strings.Join(matched, ", ")
	d := tagDecision(req, agent, ev)
	if cfg.Mode != config.RobotTagsEnforce {
		resp.Header.Set(answer.HeaderIndex, index)
		o = note(audit.DecisionReported, d)
		o.status = resp.StatusCode
		return ev, o
	}
	ev.Refused = true
	if resp.Body != nil {
		resp.Body.Close()
	}
	o = refuse(d)
	o.header = http.Header{answer.HeaderIndex: {index}}
	return ev, o
}

// tagDecision is the refusal of req by robot tags described by ev.
func tagDecision(req *http.Request, agent string, ev *tagEvent) enforce.Decision {
	d := enforce.Decision{Reason: answer.ReasonRobotTag, Agent: agent, Detail: ev.detail()}
	if req != nil && req.URL != nil {
		d.URL = enforce.RedactedURL(req.URL)
		d.Origin, _ = enforce.Origin(req.URL)
	}
	return d
}

// robotTagsStep is the robot-tag response step ([robotTagOutcome]): in
// annotate mode it marks forwarded responses that say "do not keep", in
// enforce mode it refuses them with a 403; both are audited (reason
// robot-tag; decision reported when forwarded, blocked when refused). As
// every step of the settings' response list, it sees only the origin's
// responses ([fromOrigin]), never robotsgate's own.
//
// State: reads the caller (Agent) and the verdict (Decision); writes the
// verdict (Answered through settle) ([requestState]).
type robotTagsStep struct{ cfg config.RobotTagsConfig }

// newRobotTagStep is the robot-tag step of cfg in mode (Config.Mode). In
// report mode robot_tags enforce only annotates, as nothing is refused in
// report mode.
func newRobotTagStep(cfg config.RobotTagsConfig, mode config.Mode) robotTagsStep {
	if mode == config.ModeReport && cfg.Mode == config.RobotTagsEnforce {
		cfg.Mode = config.RobotTagsAnnotate
	}
	return robotTagsStep{cfg: cfg}
}

func (t robotTagsStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if t.cfg.Mode == config.RobotTagsOff {
		return resp, outcome{}
	}
	_, o := robotTagOutcome(st.Req, resp, st.Agent, t.cfg)
	return resp, o
}
