package robottag

import (
	"slices"
	"strings"
	"testing"
)

// TestParseXRobotsTagLenient: values that stray from the comma-separated
// grammar are read for every directive they name. Before the fix each of
// them was one unknown directive ("noindex; nofollow", "\"noindex\"") and
// a page marked noindex passed under enforce.
func TestParseXRobotsTagLenient(t *testing.T) {
	noindex, nofollow := tagDir("", "noindex", ""), tagDir("", "nofollow", "")
	tests := []struct {
		name   string
		values []string
		want   []Directive
	}{
		{"semicolon separated", []string{"noindex; nofollow"}, []Directive{noindex, nofollow}},
		{"semicolon without space", []string{"noindex;nofollow"}, []Directive{noindex, nofollow}},
		{"quoted", []string{`"noindex"`}, []Directive{noindex}},
		{"single-quoted list", []string{`'noindex, nofollow'`}, []Directive{noindex, nofollow}},
		{"space separated", []string{"nofollow noindex"}, []Directive{nofollow, noindex}},
		{"tab separated", []string{"noindex\tnofollow"}, []Directive{noindex, nofollow}},
		{"other punctuation", []string{"noindex/nofollow"}, []Directive{noindex, nofollow}},
		{"none among words", []string{"NONE please"}, []Directive{tagDir("", "none", "")}},
		{"agent scope with semicolons", []string{"googlebot: noindex; nofollow"},
			[]Directive{tagDir("googlebot", "noindex", ""), tagDir("googlebot", "nofollow", "")}},
		{"agent scope quoted", []string{`googlebot: "noindex"`}, []Directive{tagDir("googlebot", "noindex", "")}},
		{"whole scoped value quoted", []string{`"googlebot: noindex"`}, []Directive{tagDir("googlebot", "noindex", "")}},
		{"agent scope space separated", []string{"googlebot: nofollow noindex"},
			[]Directive{tagDir("googlebot", "nofollow", ""), tagDir("googlebot", "noindex", "")}},
		{"agent scope kept", []string{"googlebot: noindex"}, []Directive{tagDir("googlebot", "noindex", "")}},
		{"words then a value directive", []string{"nofollow max-snippet: 20"},
			[]Directive{nofollow, tagDir("", "max-snippet", "20")}},
		{"unknown words kept whole", []string{"frob nicate"}, []Directive{tagDir("", "frob nicate", "")}},
		{"unavailable_after untouched", []string{"unavailable_after: 25 Jun 2010 15:00:00 PST"},
			[]Directive{tagDir("", "unavailable_after", "25 Jun 2010 15:00:00 PST")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseXRobotsTag(tt.values); !slices.Equal(got, tt.want) {
				t.Errorf("ParseXRobotsTag(%q)\n got %v\nwant %v", tt.values, got, tt.want)
			}
		})
	}
}

// TestParseMetaRobotsLenient: a meta element's content is read as
// leniently as a header's, under "robots" and under an agent's name.
func TestParseMetaRobotsLenient(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []Directive
	}{
		{"space separated", `<head><meta name="robots" content="noindex nofollow"></head>`,
			[]Directive{tagDir("", "noindex", ""), tagDir("", "nofollow", "")}},
		{"semicolon under an agent's name", `<head><meta name="mandelbot" content="noindex; nofollow"></head>`,
			[]Directive{tagDir("mandelbot", "noindex", ""), tagDir("mandelbot", "nofollow", "")}},
		{"quoted content", `<head><meta name="robots" content='"noindex"'></head>`, []Directive{tagDir("", "noindex", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMetaRobots(strings.NewReader(tt.html))
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("ParseMetaRobots(%q) = %v, %v; want %v", tt.html, got, err, tt.want)
			}
		})
	}
}

// TestParseMetaRobotsNoscript: a meta inside <noscript> in the head
// counts, as a parser with scripting disabled (a crawler's) reads it.
// Before the fix <noscript>'s content was raw text and the meta was
// missed.
func TestParseMetaRobotsNoscript(t *testing.T) {
	tests := []struct {
		name  string
		html  string
		want  []Directive
		ended bool
	}{
		{"noscript in head", `<html><head><noscript><meta name="robots" content="noindex"></noscript></head><body>x</body></html>`,
			[]Directive{tagDir("", "noindex", "")}, true},
		{"upper case, after a script", `<HEAD><script>var a = "<meta name=robots content=nofollow>";</script>` +
			`<NOSCRIPT><META NAME=robots CONTENT=noindex></NOSCRIPT></HEAD><BODY>`, []Directive{tagDir("", "noindex", "")}, true},
		{"noscript left open", `<head><noscript><meta name="robots" content="noindex">`, []Directive{tagDir("", "noindex", "")}, false},
		{"metas after noscript still read", `<head><noscript><link rel=x></noscript><meta name="robots" content="none"></head><body>`,
			[]Directive{tagDir("", "none", "")}, true},
		{"noscript in body ignored", `<head></head><body><noscript><meta name="robots" content="noindex"></noscript></body>`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHead(strings.NewReader(tt.html))
			if err != nil || !slices.Equal(h.Robots, tt.want) || h.Ended != tt.ended {
				t.Errorf("ParseHead(%q) = %v (ended %v), %v; want %v (ended %v)", tt.html, h.Robots, h.Ended, err, tt.want, tt.ended)
			}
		})
	}
}
