package config

import "github.com/robotsgate/robotsgate/robots/aipref"

// TDMRepConfig is how the W3C TDM Reservation Protocol is applied.
type TDMRepConfig struct {
	Mode string // off | report | enforce
	// Purposes are the declared purposes that make TDMRep bind a
	// crawler: one of them in a request's purposes and TDMRep applies.
	Purposes aipref.Set
}

// Values of tdmrep.mode.
const (
	TDMRepOff     = "off"     // neither fetch tdmrep.json nor read the header and meta
	TDMRepReport  = "report"  // audit reserved URLs and annotate responses, refuse nothing
	TDMRepEnforce = "enforce" // refuse reserved URLs (before the request, or after the response)
)

// defaultTDMPurposes returns the default of tdmrep.purposes: the mining
// purposes train-ai, ai-use and ai-input.
func defaultTDMPurposes() aipref.Set {
	return aipref.SetOf(aipref.TrainAI, aipref.AIUse, aipref.AIInput)
}

// validateTDMRep checks the tdmrep: section.
func (c *Config) validateTDMRep() error {
	return oneOf("tdmrep.mode", c.TDMRep.Mode, TDMRepOff, TDMRepReport, TDMRepEnforce)
}
