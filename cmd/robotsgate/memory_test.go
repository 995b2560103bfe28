package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/internal/config"
)

// TestMemoryLimit: serve's soft memory limit is the cache budget plus the
// allowance, unless the operator set GOMEMLIMIT.
func TestMemoryLimit(t *testing.T) {
	cfg := config.Default()
	cfg.Robots.MaxCacheMB = 300
	none := func(string) string { return "" }
	if l, ok := memoryLimit(cfg, none); !ok || l != 300<<20+memoryAllowance-programPages {
		t.Errorf("limit %d (%v), want %d", l, ok, 300<<20+memoryAllowance-programPages)
	}
	set := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}
	if _, ok := memoryLimit(cfg, set); ok {
		t.Error("a limit was set although GOMEMLIMIT is")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	var log strings.Builder
	applyMemoryLimit(cfg, none, zerolog.New(&log))
	if got := debug.SetMemoryLimit(-1); got != 300<<20+memoryAllowance-programPages {
		t.Errorf("runtime memory limit %d after serve's", got)
	}
	if !strings.Contains(log.String(), `"limit_mib":412`) {
		t.Errorf("limit not logged: %s", log.String())
	}
}
