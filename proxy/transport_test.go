package proxy

import (
	"strings"
	"testing"
)

// A bad upstream_proxy is reported without its password.
func TestUpstreamProxyErrorHidesPassword(t *testing.T) {
	for _, s := range []string{
		"http://alice:s3cret@127.0.0.1:bad/",
		"ftp://alice:s3cret@127.0.0.1:21/",
		"http://alice:s3cret@/",
		"http://alice:s3cret@127.0.0.1:3128/%zz",
	} {
		cfg := Default()
		cfg.UpstreamProxy = s
		_, err := NewTransport(cfg)
		if err == nil {
			t.Errorf("%s accepted", s)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.HasPrefix(err.Error(), "upstream_proxy:") {
			t.Errorf("%s: error %q", s, err)
		}
		if verr := cfg.Validate(); verr == nil || strings.Contains(verr.Error(), "s3cret") {
			t.Errorf("%s: Validate: %v", s, verr)
		}
	}
}
