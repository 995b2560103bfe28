package robots

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestSetTable checks that setTable finds equal sets, and only those,
// below and beyond setLinear sets.
func TestSetTable(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var st setTable
	byKey := map[string]int{}
	for i := 0; i < 2000; i++ {
		srcs := make([]int, 1+rng.Intn(3))
		for j := range srcs {
			srcs[j] = rng.Intn(12) + j*300
		}
		if rng.Intn(50) == 0 {
			srcs = []int{rng.Intn(1 << 20), 1 << 40}
		}
		key := fmt.Sprint(srcs)
		want, ok := byKey[key]
		if !ok {
			want = len(byKey)
			byKey[key] = want
		}
		if got := st.add(srcs); got != want {
			t.Fatalf("set %d %v: index %d, want %d", i, srcs, got, want)
		}
	}
	if len(byKey) <= setLinear {
		t.Fatalf("only %d sets", len(byKey))
	}
}
