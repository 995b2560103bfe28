package index

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWaveletNextValue compares nextValue with a scan of the values.
func TestWaveletNextValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var w wavelet
	for round := 0; round < 50; round++ {
		n := rng.IntN(300)
		limit := 1 + rng.IntN(2000)
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = int32(rng.IntN(limit))
		}
		w.build(vals, limit, make([]int32, n), make([]int32, n))
		for q := 0; q < 200; q++ {
			lo := rng.IntN(n + 1)
			hi := lo + rng.IntN(n-lo+1)
			x := int32(rng.IntN(limit))
			want := int32(-1)
			for _, v := range vals[lo:hi] {
				if v >= x && (want < 0 || v < want) {
					want = v
				}
			}
			if got := w.nextValue(lo, hi, x); got != want {
				t.Fatalf("nextValue(%d, %d, %d) over %v = %d, want %d", lo, hi, x, vals, got, want)
			}
		}
	}
}

// TestOccIndexNext compares the index's search with bytes.Index, on keys
// nested as suffixes of one another and paths that repeat them.
func TestOccIndexNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	var x occIndex
	for round := 0; round < 30; round++ {
		var sb strings.Builder
		sb.WriteString("User-agent: *\n")
		for i := 0; i < 40; i++ {
			sb.WriteString("Disallow: *" + word(1+rng.IntN(5)) + "*" + word(1+rng.IntN(3)) + "\n")
		}
		r, gparts := buildTest(sb.String(), true)
		f := r.idx.segs
		if f == nil {
			t.Fatal("no segFilter")
		}
		// Runs of 'd' (in no key) of up to 80 octets keep some
		// occurrences beyond the octets next looks at directly.
		path := "/"
		for len(path) < 600 {
			path += word(rng.IntN(8)) + strings.Repeat("d", rng.IntN(80))
		}
		p := []byte(path)
		x.build(p, f)
		for _, w := range gparts {
			pt := &r.parts[w]
			for i := range pt.matchers {
				m := &pt.matchers[i]
				kid := m.kfrom
				for k := 1; k < len(m.ends); k++ {
					seg := m.seg(k)
					var id int32
					if len(seg) >= 2 {
						id = f.ids[kid]
						kid++
					}
					for pos := 0; pos <= len(p); pos += 1 + rng.IntN(40) {
						want := bytes.Index(p[pos:], seg)
						if want >= 0 {
							want += pos
						}
						if got := x.next(p, seg, id, f, pos); got != want {
							t.Fatalf("next(%q, %q from %d) = %d, want %d", p, seg, pos, got, want)
						}
					}
				}
			}
		}
	}
}
