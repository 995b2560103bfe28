package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditSummarySpend: -summary sums the ledger's payments (decision
// paid) exactly per identity, origin and currency, for the records the
// filters select (here, a period).
func TestAuditSummarySpend(t *testing.T) {
	rec := func(time, user, origin, cur, charged string) string {
		return `{"time":"` + time + `","decision":"paid","reason":"paid","user":"` + user + `","url":"` + origin + `/p","origin":"` + origin +
			`","agent":"*","payment":{"currency":"` + cur + `","quoted":"` + charged + `","charged":"` + charged + `"}}` + "\n"
	}
	lines := rec("2026-12-05T10:00:00Z", "alice", "https://a.example", "USD", "0.01") +
		rec("2026-12-06T10:00:00Z", "alice", "https://a.example", "USD", "0.01") +
		rec("2026-12-06T11:00:00Z", "alice", "https://a.example", "USD", "0.02") +
		rec("2026-12-06T12:00:00Z", "bob", "https://a.example", "EUR", "0.1") +
		`{"time":"2026-12-06T12:00:00Z","decision":"allowed","reason":"budget-exhausted","origin":"https://a.example","url":"https://a.example/q","agent":"*","payment":{"currency":"USD","quoted":"0.01"}}` + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runAuditTest(t, nil, "-summary", "-since", "2026-12-06T00:00:00Z", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"PAYMENTS  SPENT", "       1  EUR 0.1           bob               https://a.example",
		"       2  USD 0.03          alice             https://a.example"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runAuditTest(t, nil, "-summary", "-json", path)
	var sum struct {
		Spend []spendRow `json:"spend"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.Spend) != 2 || sum.Spend[1].Spent != "USD 0.04" || sum.Spend[1].Payments != 3 {
		t.Errorf("-summary -json %s: %+v %v", out, sum, err)
	}
}
