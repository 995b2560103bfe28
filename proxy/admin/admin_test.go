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
		for _, basic := range []bool{false, true} {
			if got := a.authorized(h, basic); got != want {
				t.Errorf("authorized(%q, %v) = %v, want %v", h, basic, got, want)
			}
		}
	}
	// "x:abc": the token as a basic password, for the status page only.
	if !a.authorized("Basic eDphYmM=", true) || a.authorized("Basic eDphYmM=", false) {
		t.Error("basic credentials: accepted only where basic is allowed")
	}
}
