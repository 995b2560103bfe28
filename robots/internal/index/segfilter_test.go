package index

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestSegFilterScan checks that scan finds exactly the keys that occur in
// a path, against bytes.Contains, on keys and paths over a small alphabet
// (so that keys overlap, share prefixes and are suffixes of each other).
func TestSegFilterScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(alphabet string, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for round := 0; round < 300; round++ {
		alphabet := "ab\xffc/"[:2+round%4]
		if round%5 == 4 {
			alphabet = "ab\xffc/0123456789xyz" // nodes with wideMin children or more
		}
		set := map[string]bool{}
		for i := 0; i < 1+rng.IntN(400); i++ {
			set[string(word(alphabet, 1+rng.IntN(9)))] = true
		}
		var keys [][]byte
		for k := range set {
			keys = append(keys, []byte(k))
		}
		sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
		f := newSegFilter(keys)
		for j := 0; j < 20; j++ {
			p := word(alphabet, rng.IntN(40))
			found := make([]uint64, (len(keys)+63)/64)
			f.scan(p, found)
			for id, k := range keys {
				got := found[id/64]&(1<<(id%64)) != 0
				if want := bytes.Contains(p, k); got != want {
					t.Fatalf("keys %q, path %q: key %q found=%v, want %v", keys, p, k, got, want)
				}
			}
		}
	}
}
