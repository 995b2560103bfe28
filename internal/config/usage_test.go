package config

import (
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// purposes is set by YAML list, env or flag, parsed into an aipref.Set.
func TestPurposesLoad(t *testing.T) {
	cfg, err := Load(nil, testsupport.EnvMap(nil))
	if err != nil || cfg.Purposes != 0 || cfg.Usage.Unknown != "allow" || cfg.Usage.Response != "annotate" {
		t.Fatalf("defaults: %+v %v", cfg.Usage, err)
	}
	file := testsupport.WriteFile(t, "p.yaml", "purposes: [train-ai, ai-input]\nusage:\n  unknown: deny\n  response: enforce\n")
	for _, c := range []struct {
		args []string
		env  map[string]string
		want aipref.Set
	}{
		{[]string{"-config", file}, nil, aipref.SetOf(aipref.TrainAI, aipref.AIInput)},
		{nil, map[string]string{"ROBOTSGATE_PURPOSE": "search"}, aipref.SetOf(aipref.Search)},
		{[]string{"-purpose", "train-ai,search"}, nil, aipref.SetOf(aipref.TrainAI, aipref.Search)},
		{[]string{"-config", file, "-purpose", ""}, nil, 0},
	} {
		cfg, err := Load(c.args, testsupport.EnvMap(c.env))
		if err != nil || cfg.Purposes != c.want {
			t.Errorf("%v %v: purposes %q (%v), want %q", c.args, c.env, cfg.Purposes, err, c.want)
		}
	}
	cfg, err = Load([]string{"-config", file}, testsupport.EnvMap(nil))
	if err != nil || cfg.Usage.Unknown != "deny" || cfg.Usage.Response != "enforce" {
		t.Errorf("usage from YAML: %+v %v", cfg.Usage, err)
	}
}

func TestUsageConfigErrors(t *testing.T) {
	allowed := "allowed values are train-ai, search, ai-input"
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"flag", []string{"-purpose", "train-ai,training"}, nil, []string{`"training"`, allowed}},
		{"env", nil, map[string]string{"ROBOTSGATE_PURPOSE": "Search"}, []string{"ROBOTSGATE_PURPOSE", `"Search"`, allowed}},
		{"yaml", []string{"-config", testsupport.WriteFile(t, "b.yaml", "purposes: [search, ai-train]\n")}, nil, []string{"purposes", `"ai-train"`, allowed}},
		{"yaml scalar", []string{"-config", testsupport.WriteFile(t, "c.yaml", "purposes: search\n")}, nil, []string{"purposes: want a list"}},
		{"unknown", []string{"-config", testsupport.WriteFile(t, "d.yaml", "usage:\n  unknown: block\n")}, nil, []string{`usage.unknown: "block" is not one of allow, deny`}},
		{"response", []string{"-config", testsupport.WriteFile(t, "e.yaml", "usage:\n  response: off\n")}, nil, []string{`usage.response: "off" is not one of annotate, enforce`}},
		{"header", []string{"-config", testsupport.WriteFile(t, "f.yaml", "usage:\n  purpose_header: \"X Purpose\"\n")}, nil, []string{"usage.purpose_header"}},
	} {
		_, err := Load(c.args, testsupport.EnvMap(c.env))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to contain %q", c.name, err, w)
			}
		}
	}
	cfg := Default()
	cfg.Purposes = 1 << 6
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "purposes:") {
		t.Errorf("out-of-range purpose bits: %v", err)
	}
}

// ai-use (aipref vocabulary 08) is a purpose everywhere purposes are
// given; content_use is set by YAML, env or flag and names its allowed
// values when wrong.
func TestAIUseAndContentUseLoad(t *testing.T) {
	file := testsupport.WriteFile(t, "u.yaml", "purposes: [ai-use]\ncontent_use: reference\n")
	for _, c := range []struct {
		args []string
		env  map[string]string
		want aipref.Set
		use  aipref.Use
	}{
		{[]string{"-config", file}, nil, aipref.SetOf(aipref.AIUse), aipref.UseReference},
		{nil, map[string]string{"ROBOTSGATE_PURPOSE": "ai-use,search", "ROBOTSGATE_CONTENT_USE": "full"}, aipref.SetOf(aipref.AIUse, aipref.Search), aipref.UseFull},
		{[]string{"-purpose", "ai-use", "-content-use", "immediate"}, nil, aipref.SetOf(aipref.AIUse), aipref.UseImmediate},
		{[]string{"-config", file, "-content-use", ""}, nil, aipref.SetOf(aipref.AIUse), aipref.UseUnknown},
	} {
		cfg, err := Load(c.args, testsupport.EnvMap(c.env))
		if err != nil || cfg.Purposes != c.want || cfg.ContentUse != c.use {
			t.Errorf("%v %v: purposes %q content_use %q (%v), want %q %q", c.args, c.env, cfg.Purposes, cfg.ContentUse, err, c.want, c.use)
		}
	}
	if cfg, err := Load(nil, testsupport.EnvMap(nil)); err != nil || cfg.ContentUse != aipref.UseUnknown {
		t.Errorf("default content_use %q (%v)", cfg.ContentUse, err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"-content-use", "Full"}, nil},
		{nil, map[string]string{"ROBOTSGATE_CONTENT_USE": "partial"}},
		{[]string{"-config", testsupport.WriteFile(t, "v.yaml", "content_use: yes\n")}, nil},
	} {
		if _, err := Load(c.args, testsupport.EnvMap(c.env)); err == nil || !strings.Contains(err.Error(), "allowed values are immediate, reference, full") {
			t.Errorf("%v %v: error %v", c.args, c.env, err)
		}
	}
	cfg := Default()
	cfg.ContentUse = 9
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "content_use:") {
		t.Errorf("out-of-range content use: %v", err)
	}
}
