package proxy

import (
	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
)

// EventFromDecision returns the Event describing d for a request from
// client. Decision and Mode are left for the caller.
func EventFromDecision(client, method string, d enforce.Decision) audit.Event {
	return audit.Event{
		Client:           client,
		Method:           method,
		URL:              d.URL,
		Origin:           d.Origin,
		Agent:            d.Agent,
		Group:            d.Group,
		Rule:             d.Rule,
		Line:             d.Line,
		Reason:           string(d.Reason),
		RobotsStatus:     string(d.RobotsStatus),
		RobotsHTTPStatus: d.RobotsHTTPStatus,
		RobotsAge:        d.RobotsAge,
		RobotsStale:      d.RobotsStale,
		RobotsStaleWhy:   string(d.RobotsStaleReason),
		Detail:           d.Detail,
	}
}
