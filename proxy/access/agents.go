package access

import (
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Agents is whom a configuration's requests crawl for: the configured
// robots agent and its override header, the configured purposes and
// content use and the purposes header. The proxy's request steps pick
// each request's agent and purposes from it and the request's headers.
type Agents struct {
	Configured    string     // config.Config.Agent: the agent of every request, "" for the User-Agent's
	Header        string     // the canonical per-request override header, "" when disabled
	AllowOverride bool       // config.Config.AllowAgentOverride
	Purposes      aipref.Set // config.Config.Purposes
	ContentUse    aipref.Use // config.Config.ContentUse
	PurposeHeader string     // the canonical purposes header (usage.purpose_header), "" when disabled
}

// NewAgents returns the agent policy of cfg: its agent, override header
// (agent_header: "" or "-" disables it), allow_agent_override, purposes,
// content use and purposes header (usage.purpose_header: "" or "-"
// disables it).
func NewAgents(cfg *config.Config) *Agents {
	return &Agents{Configured: cfg.Agent, Header: headerKey(cfg.AgentHeader), AllowOverride: cfg.AllowAgentOverride,
		Purposes: cfg.Purposes, ContentUse: cfg.ContentUse, PurposeHeader: headerKey(cfg.Usage.PurposeHeader)}
}

// headerKey is the canonical form of a header setting, "" when it is
// disabled ("" or "-").
func headerKey(h string) string {
	if h == "" || h == "-" {
		return ""
	}
	return http.CanonicalHeaderKey(h)
}

// Override returns the value of the agent override header in h (every
// line of it, trimmed) and whether h carries a non-empty one. It is
// always false when the header is disabled.
func (a *Agents) Override(h http.Header) (string, bool) {
	if a.Header == "" {
		return "", false
	}
	v := strings.TrimSpace(strings.Join(h.Values(a.Header), ", "))
	return v, v != ""
}

// OverrideAllowed reports whether a client may choose its agent with the
// override header: always when no agent is configured (the agent then
// comes from the User-Agent, which the client chooses just as freely), and
// against a configured agent only with allow_agent_override.
func (a *Agents) OverrideAllowed(configured string) bool {
	return configured == "" || a.AllowOverride
}

// ParsePurposeHeader parses a purposes header value: a comma-separated
// list as for -purpose, or "none".
func ParsePurposeHeader(v string) (aipref.Set, error) {
	if v == "none" {
		return 0, nil
	}
	return aipref.ParsePurposes([]string{v})
}
