package answer

import (
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots"
)

// Bounds of the audit record's fields a client chooses whose length no
// refusal bounds: a request method (any token, up to the head's size) and
// the detail, which may quote a client's header or CONNECT target. The
// agent is refused when too long before it is decided (431
// agent-too-long); what is kept of it is bounded here too.
const (
	auditMethodBytes = 32
	auditDetailBytes = 4 << 10
)

// BoundClientFields cuts the fields of e a client may make long, marking
// each cut with "...".
func BoundClientFields(e *audit.Event) {
	e.Method = CutTo(e.Method, auditMethodBytes)
	e.Detail = CutTo(e.Detail, auditDetailBytes)
	e.Agent = CutTo(e.Agent, robots.MaxAgentBytes+len("..."))
}

// CutTo returns s cut to n bytes (at a character boundary) with "..."
// appended, when it is longer.
func CutTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return TruncateUTF8(s, n) + "..."
}
