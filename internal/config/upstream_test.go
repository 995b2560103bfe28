package config

import (
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// A bad upstream_proxy is reported without its password, from a flag as
// from the YAML file.
func TestUpstreamProxyErrorHidesPassword(t *testing.T) {
	for _, s := range []string{
		"http://alice:s3cret@127.0.0.1:bad/",
		"ftp://alice:s3cret@127.0.0.1:21/",
		"http://alice:s3cret@/",
		"http://alice:s3cret@127.0.0.1:3128/%zz",
	} {
		_, err := Load([]string{"-upstream-proxy", s}, testsupport.EnvMap(nil))
		if err == nil {
			t.Errorf("%s accepted", s)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "upstream_proxy") {
			t.Errorf("%s: error %q", s, err)
		}
		file := testsupport.WriteFile(t, "u.yaml", "upstream_proxy: "+s+"\n")
		if _, err := Load([]string{"-config", file}, testsupport.EnvMap(nil)); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s in YAML: %v", s, err)
		}
	}
	cfg, err := Load([]string{"-upstream-proxy", "http://alice:s3cret@127.0.0.1:3128"}, testsupport.EnvMap(nil))
	if err != nil || cfg.UpstreamProxy == nil || cfg.UpstreamProxy.Host != "127.0.0.1:3128" {
		t.Fatalf("good upstream proxy: %v %v", cfg.UpstreamProxy, err)
	}
}
