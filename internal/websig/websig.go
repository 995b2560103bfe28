// Package websig holds the bounds of a Web Bot Auth request signature
// that the settings (package config, which validates signing:) and the
// signer (package proxy/signing) share, defined once for both.
package websig

import "time"

// MaxExpires bounds a signature's lifetime: the draft recommends
// signatures that expire no more than 24 hours after they are created.
const MaxExpires = 24 * time.Hour

// ExtraComponents returns the components a signature may cover besides
// @authority and the Signature-Agent member, which it always covers.
func ExtraComponents() []string {
	return []string{"@method", "@path", "@query", "@target-uri"}
}
