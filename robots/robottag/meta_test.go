package robottag

import (
	"slices"
	"strings"
	"testing"
)

func TestCharsets(t *testing.T) {
	tests := []struct {
		name, v string
		want    []string
	}{
		{"media type", "text/html; charset=UTF-8", []string{"utf-8"}},
		{"quoted", `text/html; charset="ibm037"`, []string{"ibm037"}},
		{"spaces around =", "text/html; charset = utf-7", []string{"utf-7"}},
		{"parameters that do not parse", "text/html;;charset=utf-7;;", []string{"utf-7"}},
		{"several", "text/html; charset=utf-8, text/html; charset=utf-7", []string{"utf-8", "utf-7"}},
		{"none", "text/html", nil},
		{"empty value", "text/html; charset=", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Charsets(tt.v); !slices.Equal(got, tt.want) {
				t.Errorf("Charsets(%q) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}

// TestParseHeadCharsets: the encodings a head's metas declare are
// returned, from <meta charset> and from http-equiv Content-Type, each
// once.
func TestParseHeadCharsets(t *testing.T) {
	h, err := ParseHead(strings.NewReader(`<head><meta charset="UTF-7"><meta http-equiv="content-type" content="text/html; charset=ibm037">` +
		`<meta charset=utf-7><meta name="description" content="charset=x-ignored"></head>`))
	if want := []string{"utf-7", "ibm037"}; err != nil || !slices.Equal(h.Charsets, want) {
		t.Errorf("Charsets = %q, %v; want %q", h.Charsets, err, want)
	}
}
