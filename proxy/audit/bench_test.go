package audit

import (
	"io"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAuditRecord measures one typical blocked-request record
// written to an audit file (os.File, appended), as serve writes it.
func BenchmarkAuditRecord(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), Rotation{}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	a := New(w)
	defer a.Close()
	e := Event{
		Time: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Client: "127.0.0.1:5000", Method: "GET",
		URL: "http://a.test/private/page?id=12345", Origin: "http://a.test", Agent: "Bot", Group: "bot",
		Rule: "Disallow: /private", Line: 7, Reason: "disallowed", Decision: DecisionBlocked, Mode: "enforce",
		RobotsStatus: "ok", RobotsHTTPStatus: 200, RobotsAge: 1500 * time.Millisecond, Status: 403,
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Record(e); err != nil {
			b.Fatal(err)
		}
	}
}
