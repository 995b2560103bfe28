package admin

import "testing"

func TestAdminTokenCompare(t *testing.T) {
	a := New(Config{Token: "abc", Protect: true, Cache: nil})
	for h, want := range map[string]bool{
		"Bearer abc":   true,
		"bearer abc":   true,
		"Bearer  abc ": true,
		"Bearer abcd":  false,
		"Bearer ab":    false,
		"Basic abc":    false,
		"abc":          false,
		"":             false,
	} {
		if got := a.authorized(h); got != want {
			t.Errorf("authorized(%q) = %v, want %v", h, got, want)
		}
	}
}
