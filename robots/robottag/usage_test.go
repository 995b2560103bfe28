package robottag

import (
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

func TestTagUsage(t *testing.T) {
	tests := []struct {
		name     string
		header   []string
		meta     string
		agent    string
		image    bool
		want     aipref.Pref // for TrainAI; the others stay unknown
		deciding string
	}{
		{"noai header", []string{"noai"}, "", "bot", false, aipref.Disallowed, "noai"},
		{"noai case", []string{"NoAI, noindex"}, "", "bot", false, aipref.Disallowed, "noai"},
		{"noimageai on html", []string{"noimageai"}, "", "bot", false, aipref.Unknown, ""},
		{"noimageai on image", []string{"noimageai"}, "", "bot", true, aipref.Disallowed, "noimageai"},
		{"noai for another agent", []string{"otherbot: noai"}, "", "bot", false, aipref.Unknown, ""},
		{"noai for this agent", []string{"bot: noai"}, "", "Bot/1.0", false, aipref.Disallowed, "bot: noai"},
		{"meta robots", nil, `<head><meta name="robots" content="noai, noimageai">`, "bot", true, aipref.Disallowed, "noai"},
		{"meta agent", nil, `<meta name="BOT" content="noai">`, "bot", false, aipref.Disallowed, "bot: noai"},
		{"none is not noai", []string{"none"}, "", "bot", true, aipref.Unknown, ""},
		{"no tags", nil, "", "bot", true, aipref.Unknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := ParseXRobotsTag(tt.header)
			if tt.meta != "" {
				m, err := ParseMetaRobots(strings.NewReader(tt.meta))
				if err != nil {
					t.Fatal(err)
				}
				ds = append(ds, m...)
			}
			got, d := Usage(ds, tt.agent, tt.image)
			want := aipref.Prefs{}.With(aipref.TrainAI, tt.want)
			if got != want || d.String() != tt.deciding && !(tt.deciding == "" && d.Name == "") {
				t.Errorf("Usage = %v (%q), want %v (%q)", got, d.String(), want, tt.deciding)
			}
		})
	}
}
