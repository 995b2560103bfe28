package redisfleet

import (
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
)

// TestTDMRepEntryRoundTrip: a tdmrep.json entry stored in Redis comes
// back with its rules rebuilt (enforce.Entry.Rebuild), so a fleet shares
// tdmrep.json as it shares robots.txt, also its last good copy.
func TestTDMRepEntryRoundTrip(t *testing.T) {
	body := []byte(`[{"location": "/a/", "tdm-reservation": 1, "tdm-policy": "https://p.example/p"}]`)
	for _, e := range []*enforce.Entry{
		{Origin: enforce.TDMKey("https://example.com"), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}},
		{Origin: enforce.TDMKey("https://example.com"), Result: enforce.FetchResult{Status: enforce.StatusUnreachable, HTTPStatus: 503},
			Good: &enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200, Body: body}, Failures: 1},
	} {
		raw, err := encodeRedisEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRedisEntry(raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Parsed != nil || got.TDM == nil || got.TDMErr != nil {
			t.Fatalf("decoded: %+v", got)
		}
		if r := got.TDM.Match("/a/x"); r == nil || r.Policy != "https://p.example/p" {
			t.Fatalf("rule: %+v", r)
		}
	}
}
