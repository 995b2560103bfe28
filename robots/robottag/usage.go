package robottag

import "github.com/robotsgate/robotsgate/robots/aipref"

// Usage returns the usage preferences that robot-tag directives (from
// [ParseXRobotsTag] and [ParseMetaRobots]) state for the crawler whose
// product token is agent, and the directive that states them.
//
// Only the directives [forAgent] keeps count. "noai" ("do not use for AI
// training", as introduced by DeviantArt) disallows TrainAI; "noimageai"
// (the same, for images only) disallows TrainAI when image is set, which
// the caller sets for an image (a media type image/*). Neither says
// anything about Search or AIInput, and no tag allows a purpose. The
// directive returned is the first that disallows, Name "" when none does.
func Usage(ds []Directive, agent string, image bool) (aipref.Prefs, Directive) {
	for _, d := range forAgent(ds, agent) {
		if d.Name == "noai" || image && d.Name == "noimageai" {
			return aipref.Prefs{}.With(aipref.TrainAI, aipref.Disallowed), d
		}
	}
	return aipref.Prefs{}, Directive{}
}
