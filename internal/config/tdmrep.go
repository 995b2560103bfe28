package config

import "github.com/robotsgate/robotsgate/robots/aipref"

// TDMRepConfig is how the W3C TDM Reservation Protocol is applied.
type TDMRepConfig struct {
	Mode TDMRepMode // off | report | enforce
	// Purposes are the declared purposes that make TDMRep bind a
	// crawler: one of them in a request's purposes and TDMRep applies.
	Purposes aipref.Set
}

// TDMRepMode is a value of tdmrep.mode.
type TDMRepMode string

// Values of tdmrep.mode.
const (
	TDMRepOff     TDMRepMode = "off"     // neither fetch tdmrep.json nor read the header and meta
	TDMRepReport  TDMRepMode = "report"  // audit reserved URLs and annotate responses, refuse nothing
	TDMRepEnforce TDMRepMode = "enforce" // refuse reserved URLs (before the request, or after the response)
)

// Valid reports whether m is a value of tdmrep.mode.
func (m TDMRepMode) Valid() bool { return m == TDMRepOff || m == TDMRepReport || m == TDMRepEnforce }

// defaultTDMPurposes returns the default of tdmrep.purposes: the mining
// purposes train-ai, ai-use and ai-input.
func defaultTDMPurposes() aipref.Set {
	return aipref.SetOf(aipref.TrainAI, aipref.AIUse, aipref.AIInput)
}

// validateTDMRep checks the tdmrep: section.
func (c *Config) validateTDMRep() error {
	return checkMode("tdmrep.mode", c.TDMRep.Mode, TDMRepOff, TDMRepReport, TDMRepEnforce)
}
