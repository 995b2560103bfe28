package robots

import "github.com/robotsgate/robotsgate/robots/internal/index"

// The bounds of the engine's choices (see package index), by which the
// tests build files on either side of them.
const (
	indexMin     = index.IndexMin
	segFilterMin = index.SegFilterMin
	compactWild  = index.CompactWild
	ptableMin    = index.PtableMin
	directBudget = index.DirectBudget
	lazyKeyBytes = index.LazyKeyBytes
)

// decideWork decides path (canonical) for agent against r as MatchPath
// does, and returns the rule and the work of the decision (see
// [index.File.MatchWork]).
func decideWork(r *Robots, agent, path string) (Rule, bool, int) {
	g, _ := r.lookup(agent)
	rule, ok, work := r.ix.MatchWork(r.parts(g), []byte(path))
	return Rule(rule), ok, work
}
