package tdmrep

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// hostileBytes bounds the size of the crafted files: twice robots.max_bytes'
// default (the most a tdmrep.json fetch reads unless raised), so that
// every case holds MaxRules rules.
const hostileBytes = 1 << 20

// hostileFile returns a tdmrep.json of rules location(0), location(1), ...
// as long as it fits in hostileBytes and MaxRules.
func hostileFile(location func(i int) string) []byte {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; i < MaxRules; i++ {
		loc, _ := json.Marshal(location(i))
		r := `{"location":` + string(loc) + `,"tdm-reservation":1}`
		if sb.Len()+len(r)+2 > hostileBytes {
			break
		}
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(r)
	}
	sb.WriteString("]")
	return []byte(sb.String())
}

// hostileCases are the crafted rule shapes as tdmrep.json files of up
// to MaxRules rules within hostileBytes.
func hostileCases() []testsupport.HostileCase {
	return testsupport.HostileCases(hostileFile)
}

// TestHostileFileBoundedWork matches the crafted paths against the
// crafted files and checks, with the matcher's count of the octets it
// examined (not a clock), that no rule makes it search the whole path.
func TestHostileFileBoundedWork(t *testing.T) {
	for _, hc := range hostileCases() {
		f, err := Parse(hc.Body)
		if err != nil {
			t.Fatalf("%s: %v", hc.Name, err)
		}
		r, work := f.matchWork(hc.Path)
		if r != nil {
			t.Fatalf("%s: matched %s", hc.Name, r)
		}
		if limit := testsupport.HostileWork(hc.Body, hc.Path); work > limit {
			t.Errorf("%s (%d rules): %d octets examined, more than %d", hc.Name, len(f.Rules), work, limit)
		}
	}
}
