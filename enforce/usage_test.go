package enforce

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// attachExample is the example file of draft-ietf-aipref-attach.
const attachExample = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n"

// decideFor decides path for agent with purposes, after the first fetch.
func (v *env) decideFor(path, agent string, purposes aipref.Set) Decision {
	v.t.Helper()
	d := v.e.Decide(context.Background(), v.o.url(path), agent, DecideOptions{Purposes: purposes, UnknownDeny: v.unknownDeny})
	v.settle()
	if got := v.o.robots.Load(); got != 1 {
		v.t.Fatalf("%d robots.txt fetches, want 1", got)
	}
	return d
}

var (
	trainAI = aipref.SetOf(aipref.TrainAI)
	search  = aipref.SetOf(aipref.Search)
	aiInput = aipref.SetOf(aipref.AIInput)
)

// usageCase is one expected decision.
type usageCase struct {
	path, agent string
	purposes    aipref.Set
	allowed     bool
	reason      Reason
	rule        string
	line        int
	blocked     aipref.Set
	detail      string // substring of Detail; "" means Detail must be empty
}

func (c usageCase) check(t *testing.T, d Decision) {
	t.Helper()
	if d.Allowed != c.allowed || d.Reason != c.reason || d.Rule != c.rule || d.Line != c.line ||
		d.UsageBlocked != c.blocked || d.Purposes != c.purposes {
		t.Errorf("%s %q for %q: got allowed=%v reason=%s rule=%q line=%d blocked=%q purposes=%q, want %v %s %q %d %q",
			c.path, c.agent, c.purposes, d.Allowed, d.Reason, d.Rule, d.Line, d.UsageBlocked, d.Purposes,
			c.allowed, c.reason, c.rule, c.line, c.blocked)
	}
	if c.detail == "" && d.Detail != "" || !strings.Contains(d.Detail, c.detail) {
		t.Errorf("%s for %q: Detail %q, want %q", c.path, c.purposes, d.Detail, c.detail)
	}
}

func TestUsageAttachExample(t *testing.T) {
	v := newEnv(t, serve(200, attachExample), Config{})
	for _, c := range []usageCase{
		{path: "/test", purposes: trainAI, reason: ReasonUsageDisallowed, rule: "Content-Usage: train-ai=n", line: 4,
			blocked: trainAI, detail: "purpose train-ai disallowed"},
		{path: "/test", purposes: search, allowed: true, reason: ReasonAllowed, rule: "Allow: /", line: 2},
		{path: "/test", purposes: trainAI | search, reason: ReasonUsageDisallowed, rule: "Content-Usage: train-ai=n", line: 4,
			blocked: trainAI, detail: "purpose train-ai disallowed"},
		{path: "/test", allowed: true, reason: ReasonAllowed, rule: "Allow: /", line: 2}, // no purpose: never blocks
		{path: "/never/test", purposes: trainAI, reason: ReasonDisallowed, rule: "Disallow: /never/", line: 3},
		{path: "/ai-ok/test", purposes: trainAI, allowed: true, reason: ReasonAllowed, rule: "Allow: /", line: 2},
		// Spellings: the origin may serve /test, whose train-ai=n holds.
		{path: "/ai-ok/../test", purposes: trainAI, reason: ReasonUsageDisallowed, rule: "Content-Usage: train-ai=n", line: 4,
			blocked: trainAI, detail: "decided on the normalised path /test"},
		{path: "/ai-ok/%2e%2e/test", purposes: trainAI, reason: ReasonUsageDisallowed, rule: "Content-Usage: train-ai=n", line: 4,
			blocked: trainAI, detail: "decided on the normalised path /test"},
		// As sent the path states train-ai=n: a spelling's y does not win.
		{path: "/ai-ok;x=1/test", purposes: trainAI, reason: ReasonUsageDisallowed, rule: "Content-Usage: train-ai=n", line: 4,
			blocked: trainAI, detail: "purpose train-ai disallowed"},
	} {
		d := v.decideFor(c.path, c.agent, c.purposes)
		c.check(t, d)
	}
	// Usage is reported whatever the purposes.
	d := v.decideFor("/test", "", 0)
	if u := d.Usage.For(aipref.TrainAI); u.Pref != aipref.Disallowed || u.Source != robots.ContentUsage || u.Line != 4 || d.Usage.Prefs().String() != "train-ai=n" {
		t.Errorf("/test usage: %+v", d.Usage)
	}
	if d := v.decideFor("/ai-ok/test", "", 0); d.Usage.Prefs().String() != "train-ai=y" || d.Usage.For(aipref.TrainAI).Rule != "Content-Usage: /ai-ok/ train-ai=y" {
		t.Errorf("/ai-ok/test usage: %+v", d.Usage)
	}
	if d := v.decideFor("/never/test", "", trainAI); d.Usage != (Usage{}) {
		t.Errorf("a disallowed URL has no usage: %+v", d.Usage)
	}
}

// The declared purposes of each decision decide it, quiet or not; a
// decision without purposes only reports usage preferences.
func TestUsageDeclaredPurposes(t *testing.T) {
	v := newEnv(t, serve(200, attachExample), Config{})
	ctx := context.Background()
	if d := v.e.Decide(ctx, v.o.url("/test"), "", DecideOptions{Purposes: trainAI}); d.Reason != ReasonUsageDisallowed || d.Purposes != trainAI {
		t.Errorf("Decide train-ai: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/test"), "", DecideOptions{Purposes: trainAI, Quiet: true}); d.Reason != ReasonUsageDisallowed {
		t.Errorf("quiet Decide train-ai: %+v", d)
	}
	if d := v.decideFor("/test", "", search); !d.Allowed {
		t.Errorf("Decide search: %+v", d)
	}
	if d := v.e.Decide(ctx, v.o.url("/test"), "", DecideOptions{}); !d.Allowed {
		t.Errorf("Decide without purposes: %+v", d)
	}
}

const signalFile = "Content-Signal: ai-train=no, search=yes\n" +
	"User-agent: *\nContent-Signal: ai-input=no\nDisallow: /private\n\n" +
	"User-agent: goodbot\nContent-Signal: ai-train=yes, ai-input=yes\nDisallow: /private\n"

func TestUsageContentSignal(t *testing.T) {
	v := newEnv(t, serve(200, signalFile), Config{})
	for _, c := range []usageCase{
		// File-level signal for every group that states none for a purpose.
		{path: "/a", purposes: trainAI, reason: ReasonUsageDisallowed, rule: "Content-Signal: ai-train=no, search=yes", line: 1,
			blocked: trainAI, detail: "purpose train-ai disallowed"},
		{path: "/a", purposes: search, allowed: true, reason: ReasonAllowed},
		// Group-level signal.
		{path: "/a", purposes: aiInput | search, reason: ReasonUsageDisallowed, rule: "Content-Signal: ai-input=no", line: 3,
			blocked: aiInput, detail: "purpose ai-input disallowed"},
		{path: "/a", purposes: trainAI | aiInput, reason: ReasonUsageDisallowed, rule: "Content-Signal: ai-train=no, search=yes", line: 1,
			blocked: trainAI | aiInput, detail: "purpose train-ai disallowed; purpose ai-input disallowed"},
		// The group's signal comes before the file's.
		{path: "/a", agent: "goodbot", purposes: trainAI | aiInput | search, allowed: true, reason: ReasonAllowed},
		{path: "/private/x", agent: "goodbot", purposes: trainAI, reason: ReasonDisallowed, rule: "Disallow: /private", line: 8},
	} {
		c.check(t, v.decideFor(c.path, c.agent, c.purposes))
	}
}

func TestUsageUnknownDeny(t *testing.T) {
	body := "User-agent: *\nContent-Usage: /ai-ok/ train-ai=y\nContent-Usage: /s/ search=y\n"
	v := newEnv(t, serve(200, body), Config{})
	v.unknownDeny = true
	for _, c := range []usageCase{
		{path: "/x", purposes: trainAI, reason: ReasonUsageDisallowed, blocked: trainAI, detail: "purpose train-ai: usage preference unknown"},
		{path: "/ai-ok/x", purposes: trainAI, allowed: true, reason: ReasonAllowed},
		{path: "/ai-ok/x", purposes: trainAI | search, reason: ReasonUsageDisallowed, blocked: search, detail: "purpose search: usage preference unknown"},
		// "/ai-ok/../x" is /x to the origin, where nothing is stated.
		{path: "/ai-ok/../x", purposes: trainAI, reason: ReasonUsageDisallowed, blocked: trainAI,
			detail: "decided on the normalised path /x"},
		{path: "/x", allowed: true, reason: ReasonAllowed}, // no purpose: never blocks
	} {
		c.check(t, v.decideFor(c.path, c.agent, c.purposes))
	}
	// Under usage.unknown: allow the same spelling reports the
	// preference every spelling shares: none.
	w := newEnv(t, serve(200, body), Config{})
	if d := w.decideFor("/ai-ok/../x", "", trainAI); !d.Allowed || d.Usage.For(aipref.TrainAI).Pref != aipref.Unknown {
		t.Errorf("unknown=allow: %+v", d)
	}
}

// Without a robots.txt no preference is known.
func TestUsageUnknownDenyNoRobots(t *testing.T) {
	v := newEnv(t, serve(404, ""), Config{})
	v.unknownDeny = true
	c := usageCase{path: "/x", purposes: search, reason: ReasonUsageDisallowed, blocked: search, detail: "(no robots.txt in force)"}
	c.check(t, v.decideFor("/x", "", search))
	c = usageCase{path: "/x", allowed: true, reason: ReasonRobotsUnavailable, detail: "no robots.txt"}
	c.check(t, v.decideFor("/x", "", 0))
	c = usageCase{path: "/robots.txt", purposes: search, allowed: true, reason: ReasonRobotsTxt}
	c.check(t, v.decideFor("/robots.txt", "", search))
}

// A last good copy decides usage while the origin is unreachable.
func TestUsageStaleCopy(t *testing.T) {
	v := newEnv(t, serve(200, attachExample), Config{})
	v.decide("/test", 1)
	v.o.set(serve(503, ""))
	v.clock.Advance(25 * time.Hour)
	d := v.e.Decide(context.Background(), v.o.url("/test"), "", DecideOptions{Purposes: trainAI})
	if d.Reason != ReasonUsageDisallowed || !d.RobotsStale || d.RobotsStaleReason != StaleUnreachable || d.Line != 4 {
		t.Fatalf("stale: %+v", d)
	}
}
