package signing

import (
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
)

// newKeyFile writes a new Ed25519 key to a file name of a temporary
// directory and returns its path.
func newKeyFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if _, err := GenerateKey(p, rand.Reader); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSigningIdentityErrors: the credentials file's signing fields that
// cannot make an identity are refused, naming the user.
func TestSigningIdentityErrors(t *testing.T) {
	kp, kp2 := newKeyFile(t, "a.pem"), newKeyFile(t, "b.pem")
	for _, c := range []struct {
		name string
		ids  []access.Identity
		key  string
		want string
	}{
		{"agent without any key", []access.Identity{{User: "alice", SignatureAgent: "https://a.example/"}}, "", `user "alice": a signing identity needs a key`},
		{"key without any agent", []access.Identity{{User: "alice", SigningKey: kp}}, "", `user "alice": a signing identity needs a key (signing_key= or signing.key) and a Signature-Agent`},
		{"two identities for one user", []access.Identity{{User: "alice", SigningKey: kp}, {User: "alice", SigningKey: kp2}}, kp, `user "alice": two lines give it different signing identities`},
		{"unreadable user key", []access.Identity{{User: "bob", SigningKey: kp + ".absent"}}, kp, `user "bob": signing_key=: ` + kp + `.absent: cannot read`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default().Signing
			if c.key != "" {
				cfg.Key, cfg.Agent = c.key, "https://crawler.example/.well-known/http-message-signatures-directory"
			}
			if _, err := NewSigners(&cfg, c.ids, nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}
