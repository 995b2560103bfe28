package robottag

import (
	"slices"
	"strings"
	"testing"
)

func TestTagVerdict(t *testing.T) {
	hdr := func(vs ...string) []Directive { return ParseXRobotsTag(vs) }
	meta := func(s string) []Directive {
		ds, err := ParseMetaRobots(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	def := DefaultDeny()
	tests := []struct {
		name    string
		ds      []Directive
		agent   string
		deny    []string
		matched []string
	}{
		// The seed's examples, for Mandelbot with the default deny list.
		{"seed header noindex", hdr("noindex"), "Mandelbot", def, []string{"noindex"}},
		{"seed header mandelbot: noindex", hdr("mandelbot: noindex"), "Mandelbot", def, []string{"noindex"}},
		{"seed header mandelbot: noindex, other agent", hdr("mandelbot: noindex"), "Googlebot", def, nil},
		{"seed header mandelbot: noindex, no agent", hdr("mandelbot: noindex"), "", def, nil},
		{"seed header list", hdr("nofollow,noindex,noarchive"), "Mandelbot", def, []string{"noindex", "none"}},
		{"seed header none", hdr("none"), "Mandelbot", def, []string{"noindex", "none"}},
		{"seed meta robots", meta(`<meta name="robots" content="noindex" />`), "Mandelbot", def, []string{"noindex"}},
		{"seed meta mandelbot", meta(`<meta name="mandelbot" content="noindex" />`), "mandelbot", def, []string{"noindex"}},
		{"seed meta mandelbot, other agent", meta(`<meta name="mandelbot" content="noindex" />`), "Googlebot", def, nil},
		{"seed meta none", meta(`<meta name="robots" content="none" />`), "Mandelbot", def, []string{"noindex", "none"}},

		// none <-> noindex per the expansion.
		{"none counts for noindex", hdr("none"), "x", []string{"noindex"}, []string{"noindex"}},
		{"none counts for nofollow", hdr("none"), "x", []string{"nofollow"}, []string{"nofollow"}},
		{"deny none: noindex alone is not none", hdr("noindex"), "x", []string{"none"}, nil},
		{"deny none: noindex+nofollow is none", hdr("noindex", "nofollow"), "x", []string{"none"}, []string{"none"}},
		{"deny none: split across header and agent", hdr("noindex, x: nofollow"), "X", []string{"none"}, []string{"none"}},
		{"nofollow alone keeps", hdr("nofollow, noarchive"), "x", def, nil},

		{"noai added by the user", hdr("noai"), "x", []string{"noindex", "none", "NoAI", "noimageai"}, []string{"noai"}},
		{"noai not denied by default", hdr("noai, noimageai"), "x", def, nil},
		{"case and whitespace in deny, duplicates", hdr("NOINDEX"), "x", []string{" NoIndex ", "noindex", ""}, []string{"noindex"}},
		{"value does not matter", hdr("noindex: whatever"), "x", def, []string{"noindex"}},
		{"unknown directive never denies", hdr("frobnicate"), "x", def, nil},
		{"empty deny list", hdr("none"), "x", nil, nil},
		{"no directives", nil, "x", def, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			denied, matched := Verdict(tt.ds, tt.agent, tt.deny)
			if denied != (len(tt.matched) > 0) || !slices.Equal(matched, tt.matched) {
				t.Errorf("Verdict(%v, %q, %q) = %v, %q; want %v, %q",
					tt.ds, tt.agent, tt.deny, denied, matched, len(tt.matched) > 0, tt.matched)
			}
		})
	}
}
