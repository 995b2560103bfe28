package audit

import (
	"os"
	"testing"

	"github.com/rs/zerolog"
)

// TestMain silences zerolog's own report of a failed write ("zerolog:
// could not write event: …" on stderr): these tests fail writes on
// purpose, and the Auditor reports and counts each failure itself.
func TestMain(m *testing.M) {
	zerolog.ErrorHandler = func(error) {}
	os.Exit(m.Run())
}
