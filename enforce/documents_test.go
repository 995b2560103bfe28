package enforce

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/robots/aipref"
)

// keptDocs records what an Enforcer hands to its Documents.
type keptDocs struct {
	mu   sync.Mutex
	kept map[string]string // hash → body
}

func (k *keptDocs) Keep(_ Doc, sum string, body []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kept == nil {
		k.kept = map[string]string{}
	}
	k.kept[sum] = string(body)
}

func (k *keptDocs) body(sum string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kept[sum]
}

func hexSHA(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

// TestDecisionsNameTheirDocuments: each verdict names the hash of the
// document in force, the last good copy while the origin is unreachable,
// and hands its body to Documents.
func TestDecisionsNameTheirDocuments(t *testing.T) {
	t.Run("robots.txt", func(t *testing.T) {
		var k keptDocs
		v := newEnv(t, serve(200, testRobots), Config{Documents: &k})
		if d := v.decide("/private", 1); d.RobotsSHA256 != hexSHA(testRobots) || k.body(d.RobotsSHA256) != testRobots {
			t.Fatalf("decision names %q; kept %q", d.RobotsSHA256, k.body(d.RobotsSHA256))
		}
		v.o.set(serve(503, ""))
		v.clock.Advance(24 * time.Hour)
		v.decide("/private", 2) // the expired copy decides while it is re-fetched
		if d := v.decide("/private", 2); !d.RobotsStale || d.RobotsStaleReason != StaleUnreachable || d.RobotsSHA256 != hexSHA(testRobots) {
			t.Fatalf("unreachable, last good copy: %+v", d)
		}
	})
	t.Run("no robots.txt", func(t *testing.T) {
		v := newEnv(t, serve(404, ""), Config{})
		if d := v.decide("/private", 1); d.RobotsSHA256 != "" {
			t.Fatalf("a 404 names a document: %+v", d)
		}
	})
	t.Run("tdmrep.json", func(t *testing.T) {
		const file = `[{"location": "/a/", "tdm-reservation": 1}]`
		v := newTDMEnv(t, file)
		var k keptDocs
		v.e.docs = &k
		if d := v.tdm("/a/x"); !d.Reserved() || d.SHA256 != hexSHA(file) || k.body(d.SHA256) != file {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("license", func(t *testing.T) {
		v := newLicenseEnv(t, articlesLicense)
		var k keptDocs
		v.e.docs = &k
		if d := v.licenses("/articles/x", aipref.TrainAI); d.SHA256 != hexSHA(articlesLicense) || k.body(d.SHA256) != articlesLicense {
			t.Fatalf("%+v", d)
		}
	})
}
