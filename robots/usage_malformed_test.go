package robots

import (
	"testing"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

// TestMalformedContentSignalIsUnknown: a Content-Signal line that names a
// purpose but cannot be parsed states an unknown preference for it, from
// that line: it does not fall back to another line (here the file's
// permissive one) as if the group had said nothing. Before, each of
// these gave ai-train the file's allowed.
func TestMalformedContentSignalIsUnknown(t *testing.T) {
	for _, line := range []string{"ai-train=no;", "search=yes;ai-train=no", `ai-train="no"`, "ai-train", "AI-Train: no", "ai-train=no ai-input=no"} {
		r := Parse([]byte("Content-Signal: ai-train=yes\nUser-agent: *\nAllow: /\nContent-Signal: " + line + "\n"))
		_, u := r.MatchUsage("TestBot", "/page")
		got := u.For(aipref.TrainAI)
		if got.Pref != aipref.Unknown || got.Source != ContentSignal || got.Line != 4 {
			t.Errorf("Content-Signal: %s: train-ai %+v, want unknown from line 4", line, got)
		}
		if sig := u.Signal(aipref.TrainAI); sig.Pref != aipref.Unknown || sig.Line != 4 {
			t.Errorf("Content-Signal: %s: the signal verdict %+v, want unknown from line 4", line, sig)
		}
	}
	// A malformed element does not undo a disallow, nor touch a purpose
	// it does not name.
	r := Parse([]byte("User-agent: *\nContent-Signal: ai-train=no, ai-train=\"yes\", search=yes, research=maybe\n"))
	_, u := r.MatchUsage("TestBot", "/page")
	if tr, s := u.For(aipref.TrainAI), u.For(aipref.Search); tr.Pref != aipref.Disallowed || s.Pref != aipref.Allowed {
		t.Errorf("train-ai %+v, search %+v; want disallowed, allowed", tr, s)
	}
}
