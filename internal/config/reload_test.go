package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRestartOnlyDocumented: the settings the options table marks
// restart-only are exactly those docs/configuration-reload.md says need
// a restart (a key, or a section as `section.*`), so that a setting
// cannot become silently reloadable, or silently restart-only.
func TestRestartOnlyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration-reload.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(doc), "**What needs a restart**")
	if !ok {
		t.Fatal("docs/configuration-reload.md: no paragraph **What needs a restart**")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	keys, sections := map[string]bool{}, map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_.]+?)(\\.\\*)?`").FindAllStringSubmatch(para, -1) {
		if m[2] != "" {
			sections[m[1]+"."] = true
		} else {
			keys[m[1]] = true
		}
	}
	for _, o := range options() {
		section, _, _ := strings.Cut(o.key, ".")
		documented := keys[o.key] || sections[section+"."]
		if documented != o.restart {
			t.Errorf("%s: restart-only %v in the options table, %v in docs/configuration-reload.md", o.key, o.restart, documented)
		}
		if RestartOnly(o.key) != o.restart {
			t.Errorf("RestartOnly(%q) = %v", o.key, !o.restart)
		}
		delete(keys, o.key)
	}
	delete(keys, "needs_restart") // the answer's field, not a setting
	for k := range keys {
		t.Errorf("docs/configuration-reload.md names %q, which is no setting", k)
	}
}

// TestReloadKeepsRestartOnly: a reload's configuration keeps the running
// value of every restart-only setting and takes every other one from the
// new file; Changes names each change on its side.
func TestReloadKeepsRestartOnly(t *testing.T) {
	running := Default()
	changed := Default()
	changed.Listen, changed.Agent = "127.0.0.1:1", "OtherBot"
	changed.Upstream.MaxIdleConns++
	changed.Politeness.MaxConcurrency++
	merged := WithRestartOnly(changed, running)
	if merged.Listen != running.Listen || merged.Upstream.MaxIdleConns != running.Upstream.MaxIdleConns {
		t.Errorf("restart-only settings not kept: %q %d", merged.Listen, merged.Upstream.MaxIdleConns)
	}
	if merged.Agent != "OtherBot" || merged.Politeness.MaxConcurrency != changed.Politeness.MaxConcurrency {
		t.Errorf("reloadable settings not applied: %q %d", merged.Agent, merged.Politeness.MaxConcurrency)
	}
	applied, restart := Changes(running, changed)
	if strings.Join(applied, ",") != "agent,politeness.max_concurrency" || strings.Join(restart, ",") != "listen,upstream.max_idle_conns" {
		t.Errorf("Changes: applied %v, restart %v", applied, restart)
	}
}
