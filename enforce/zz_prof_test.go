package enforce

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZProf(t *testing.T) {
	p := os.Getenv("I18PROF")
	if p == "" {
		t.Skip()
	}
	runtime.MemProfileRate = 512
	s := NewMemoryStore(20000, 1<<40)
	mixFill(t, s, 5000)
	runtime.GC()
	f, _ := os.Create(p)
	pprof.WriteHeapProfile(f)
	f.Close()
	runtime.KeepAlive(s)
}
