package proxy

import (
	"time"

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
