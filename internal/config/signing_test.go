package config

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

func TestLoadSigning(t *testing.T) {
	cfg, err := Load([]string{"-signature-agent", "https://crawler.example/dir", "-signing-components", "@method,@path"},
		testsupport.EnvMap(map[string]string{"ROBOTSGATE_SIGNING_KEY": "/run/secrets/wba.pem"}))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Signing
	if s.Key != "/run/secrets/wba.pem" || s.Agent != "https://crawler.example/dir" || strings.Join(s.Components, ",") != "@method,@path" ||
		s.Expires != 5*time.Minute || s.AgentForm != AgentFormDictionary {
		t.Errorf("signing %+v", s)
	}
	if RestartOnly("signing.key") || RestartOnly("signing.publish") {
		t.Error("signing keys must change at a reload")
	}
}

func TestValidateSigning(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*SigningConfig)
		wantErr string
	}{
		{"off", func(*SigningConfig) {}, ""},
		{"on", func(s *SigningConfig) { s.Key, s.Agent = "k.pem", "https://c.example/d" }, ""},
		{"key without agent", func(s *SigningConfig) { s.Key = "k.pem" }, "signing.agent: empty, but signing.key is set"},
		{"http agent", func(s *SigningConfig) { s.Key, s.Agent = "k.pem", "http://c.example/d" }, "signing.agent: \"http://c.example/d\" is not an absolute https URL"},
		{"agent with a quote", func(s *SigningConfig) { s.Agent = `https://c.example/"` }, "signing.agent:"},
		{"agent with user info", func(s *SigningConfig) { s.Agent = "https://u:p@c.example/" }, "signing.agent:"},
		{"expires 0", func(s *SigningConfig) { s.Expires = 0 }, "signing.expires: 0s is not in (0s, 24h]"},
		{"expires 25h", func(s *SigningConfig) { s.Expires = 25 * time.Hour }, "signing.expires"},
		{"expires 24h", func(s *SigningConfig) { s.Expires = 24 * time.Hour }, ""},
		{"component", func(s *SigningConfig) { s.Components = []string{"@status"} }, `signing.components: "@status" is not one of @method, @path, @query, @target-uri (flag -signing-components, env ROBOTSGATE_SIGNING_COMPONENTS)`},
		{"component twice", func(s *SigningConfig) { s.Components = []string{"@path", "@path"} }, "listed twice"},
		{"form", func(s *SigningConfig) { s.AgentForm = "list" }, `signing.agent_form: "list" is not one of dictionary, string`},
		{"publish without key", func(s *SigningConfig) { s.Publish = []string{"old.pem"} }, "signing.publish: set without signing.key"},
	} {
		c := Default()
		tc.mutate(&c.Signing)
		err := c.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
