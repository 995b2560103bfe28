package proxy

import (
	"fmt"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots"
)

// Bounds on what clients write: every string a client chooses that
// reaches an audit record, an answer or the status page is bounded.
//
// The robots agent a client names (the crawler token of
// its User-Agent, or an honoured override header) is refused 431
// agent-too-long when it is longer than maxAgentBytes, before it is
// decided: it would otherwise be copied whole into the audit record, the
// refusal, the status page and its event streams. It is refused rather
// than cut, as a cut name could match another robots.txt group.

// maxAgentBytes bounds the robots agent a client may name: product tokens
// are short words (RFC 9309), far below it.
const maxAgentBytes = robots.MaxAgentBytes

// agentQuoteBytes is how much of an agent too long an audit record and
// the refusal keep.
const agentQuoteBytes = 64

// agentTooLong returns the refusal of r when agent, the robots agent
// picked for it, is longer than [maxAgentBytes]; ok is false then.
func agentTooLong(r *http.Request, agent string) (o outcome, ok bool) {
	if len(agent) <= maxAgentBytes {
		return outcome{}, true
	}
	d := enforce.Decision{
		Reason: answer.ReasonAgentTooLong, Agent: cutTo(agent, agentQuoteBytes),
		Detail: fmt.Sprintf("the agent (product token) has %d bytes, more than %d", len(agent), maxAgentBytes),
	}
	if r.URL != nil {
		d.URL = cut(enforce.RedactedURL(r.URL))
		if o, err := enforce.Origin(r.URL); err == nil {
			d.Origin = cut(o)
		}
	}
	return refuse(d), false
}

// Bounds of the audit record's fields a client chooses whose length no
// refusal bounds: a request method (any token, up to the head's size) and
// the detail, which may quote a client's header or CONNECT target.
const (
	auditMethodBytes = 32
	auditDetailBytes = 4 << 10
)

// boundClientFields cuts the fields of e a client may make long, marking
// each cut with "...".
func boundClientFields(e *audit.Event) {
	e.Method = cutTo(e.Method, auditMethodBytes)
	e.Detail = cutTo(e.Detail, auditDetailBytes)
	e.Agent = cutTo(e.Agent, maxAgentBytes+len("..."))
}

// cutTo returns s cut to n bytes (at a character boundary) with "..."
// appended, when it is longer.
func cutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return answer.TruncateUTF8(s, n) + "..."
}
