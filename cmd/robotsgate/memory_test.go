package main

import (
	"math"
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

// TestGCPercent: serve raises GOGC only when a memory limit bounds the
// heap and the operator did not set GOGC.
func TestGCPercent(t *testing.T) {
	oldLimit := debug.SetMemoryLimit(-1)
	oldPercent := debug.SetGCPercent(100)
	defer func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	}()
	none := func(string) string { return "" }
	gogc := func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}
	var log strings.Builder
	debug.SetMemoryLimit(math.MaxInt64) // no limit in force
	if applyGCPercent(none, zerolog.New(&log)) || debug.SetGCPercent(100) != 100 {
		t.Error("GOGC raised without a memory limit")
	}
	debug.SetMemoryLimit(600 << 20)
	if applyGCPercent(gogc, zerolog.New(&log)) || debug.SetGCPercent(100) != 100 {
		t.Error("GOGC raised although the operator set it")
	}
	if !applyGCPercent(none, zerolog.New(&log)) {
		t.Fatal("GOGC not raised under a memory limit")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC %d after serve's, want %d", got, gcPercent)
	}
	if !strings.Contains(log.String(), `"GOGC":"400"`) {
		t.Errorf("GOGC not logged: %s", log.String())
	}
}
