package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// hugeAgent is a product token of almost 1 MB, under the default
// client.max_header_bytes so that the request head is read.
var hugeAgent = strings.Repeat("A", 1_000_000)

// TestAgentTooLongRefused: an agent longer than maxAgentBytes, from the
// User-Agent or an honoured override, on plain HTTP and CONNECT, is
// refused 431 agent-too-long, undecided, and neither the answer nor the
// audit record carries it whole; an agent at the bound is decided.
func TestAgentTooLongRefused(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{})
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"user-agent", []string{"User-Agent", hugeAgent + "/1.0"}},
		{"honoured override", []string{"X-Robots-Agent", hugeAgent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.audit.Records(t))
			resp, body := h.get(t, o.URL+"/public", tc.headers...)
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonAgentTooLong) {
				t.Fatalf("status %d decision %q, want 431 agent-too-long", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
			}
			if len(body) > 4<<10 || len(resp.Header.Get(answer.HeaderAgent)) > 128 {
				t.Errorf("answer of %d bytes, agent header of %d: the agent is copied", len(body), len(resp.Header.Get(answer.HeaderAgent)))
			}
			recs := h.audit.Records(t)
			if len(recs) != before+1 {
				t.Fatalf("%d records, want one more than %d", len(recs), before)
			}
			if rec := recs[len(recs)-1]; rec["reason"] != string(answer.ReasonAgentTooLong) || len(rec["agent"].(string)) > 128 ||
				len(h.audit.String()) > 8<<10 {
				t.Errorf("record %v; audit log %d bytes", rec["reason"], len(h.audit.String()))
			}
			if n := o.hits.Load(); n != 0 {
				t.Errorf("origin hit %d times", n)
			}
		})
	}
	t.Run("connect", func(t *testing.T) {
		resp, _, _ := rawConnect(t, h.addr, strings.TrimPrefix(o.URL, "http://"), "User-Agent: "+hugeAgent)
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonAgentTooLong) {
			t.Fatalf("CONNECT: status %d decision %q, want 431 agent-too-long", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
		}
	})
	t.Run("at the bound", func(t *testing.T) {
		resp, _ := h.get(t, o.URL+"/public", "User-Agent", strings.Repeat("B", maxAgentBytes)+"/1.0")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a %d-byte agent: status %d, want 200", maxAgentBytes, resp.StatusCode)
		}
	})
}

// TestHugeAgentsIdleStreamBounded: refusals with 1 MB User-Agents while
// an events stream reads nothing keep what the status board holds (its
// own accounting of the recent records and the unsent ones) small, and
// every audit record small.
func TestHugeAgentsIdleStreamBounded(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.Audit = config.AuditAll }})
	ev := statusGet(t, h.addr, "/v1/events", "")
	defer ev.Body.Close() // never read
	const n = 24
	for i := range n {
		resp, _ := h.get(t, o.URL+"/private/x", "User-Agent", hugeAgent+"/1.0")
		if resp.StatusCode/100 != 4 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	if held := h.srv.board.Snapshot(0).HeldBytes; held > 64<<10 {
		t.Errorf("the board holds %d bytes after %d refusals with 1 MB agents", held, n)
	}
	for i, rec := range h.audit.Records(t) {
		if a, _ := rec["agent"].(string); len(a) > 256 {
			t.Errorf("record %d: agent of %d bytes", i, len(a))
		}
	}
	if l := len(h.audit.String()); l > n*2<<10 {
		t.Errorf("audit log of %d bytes for %d records", l, n)
	}
}

// TestHugePurposeHeaderQuotedShort: an honoured purposes header naming
// an unknown purpose of almost 1 MB is refused 400 invalid-purpose with
// the purpose quoted short, in the answer and the audit record.
func TestHugePurposeHeaderQuotedShort(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), nil)
	h := newHarness(t, harnessOpts{config: func(c *config.Config) { c.AllowAgentOverride = true }})
	resp, body := h.get(t, o.URL+"/public", "X-Robots-Purpose", hugeAgent)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonInvalidPurpose) {
		t.Fatalf("status %d decision %q, want 400 invalid-purpose", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
	}
	if len(body) > 4<<10 || len(h.audit.String()) > 4<<10 {
		t.Errorf("answer of %d bytes, audit log of %d: the header is copied", len(body), len(h.audit.String()))
	}
}
