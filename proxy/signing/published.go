package signing

import (
	"cmp"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
)

// What "robotsgate publish" describes to the sites a configuration's
// crawlers visit: each identity, its token and purposes, and how it signs.

// PublishedIdentity is one identity of a configuration as "robotsgate
// publish" describes it to the sites it visits: the configured one (User
// "") or a proxy user of the credentials.
type PublishedIdentity struct {
	User     string   // the proxy user; "" for the configured identity
	Token    string   // its robots.txt product token; "" when taken from each request's User-Agent
	Purposes []string // its declared purposes
	// OwnSigner says that the user signs with a key or Signature-Agent of
	// its own (credentials file signing_key=, signature_agent=).
	OwnSigner bool
	Agent     string // its Signature-Agent URL (of its key directory); "" when it does not sign
	KeyID     string // the keyid of its signing key; "" when it does not sign
	// Directory is the key directory served at Agent, as the admin
	// listener serves it; nil when it does not sign.
	Directory []byte
}

// PublishedIdentities returns the identities of cfg, the configured one
// first, then each user of the credentials once, in order. The key files
// and the credentials file are read as serve reads them.
func PublishedIdentities(cfg config.Config) ([]PublishedIdentity, error) {
	a, err := access.New(access.Options{Credentials: cfg.Auth.Credentials, CredentialsFile: cfg.Auth.CredentialsFile})
	if err != nil {
		return nil, err
	}
	ids := a.Identities()
	sg, err := NewSigners(&cfg.Signing, ids, time.Now)
	if err != nil {
		return nil, err
	}
	def := PublishedIdentity{Token: cfg.Agent, Purposes: cfg.Purposes.Names()}
	if err := publishSigner(&def, sg, sg.ForIdentity(access.Identity{})); err != nil {
		return nil, err
	}
	out := []PublishedIdentity{def}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id.User] {
			continue
		}
		seen[id.User] = true
		p := PublishedIdentity{User: id.User, Token: cmp.Or(id.Agent, cfg.Agent), Purposes: def.Purposes}
		if id.HasPurposes {
			p.Purposes = id.Purposes.Names()
		}
		s := sg.ForIdentity(id)
		p.OwnSigner = s != nil && s != sg.Default()
		if err := publishSigner(&p, sg, s); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// publishSigner fills in p's signing fields from s (nil: p does not
// sign), the key directory being that of sg for s's Signature-Agent.
func publishSigner(p *PublishedIdentity, sg *Signers, s *Signer) error {
	if s == nil {
		return nil
	}
	dir, err := Directory(sg.DirectoryKeys(AgentHost(s.Agent())))
	if err != nil {
		return err
	}
	p.Agent, p.KeyID, p.Directory = s.Agent(), s.KeyID(), dir
	return nil
}
