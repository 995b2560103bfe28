package proxy

import (
	"errors"
	"net/http"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// signStep is the request step that signs a request about to be
// forwarded (Web Bot Auth, proxy/signing), after every step that may
// refuse it: a refused request is never signed. The key is the user's
// (credentials file signing_key=), else signing.key; none: unsigned.
//
// State: reads the caller (Identity) and Live; writes the verdict
// (SignedKeyID) ([requestState]).
type signStep struct{ s *Server }

func (p signStep) onRequest(r *http.Request, st *requestState) outcome {
	sg := p.s.settings(st).signers
	if sg == nil {
		return outcome{}
	}
	identify(r, st)
	signer := sg.ForIdentity(st.identity())
	if signer == nil {
		return outcome{}
	}
	_, err := signer.Sign(r)
	res := signing.Result(err)
	p.s.metrics.Signed("forward", res)
	if err != nil {
		ev := p.s.log.Warn() // a client whose own signature fields conflict may send many: debug
		if res == signing.ResultSkipped {
			ev = p.s.log.Debug()
		}
		ev.Str("url", answer.EscapeControl(r.URL.Redacted())).Str("result", res).Err(err).Msg("request forwarded unsigned")
		return outcome{}
	}
	st.SignedKeyID = signer.KeyID()
	return outcome{}
}

// NewFetchSigner returns the Holder of cfg's signing.key Signer (none
// when signing.key is not set), for a caller without a Server that
// fetches as serve does ("robotsgate check -fetch"): give its
// HTTPFetcher Transport(the fetch transport).
func NewFetchSigner(cfg config.Config) (*signing.Holder, error) {
	sg, err := signing.NewSigners(&cfg.Signing, nil, time.Now) // signing.key alone: fetches are never a user's
	if err != nil {
		return nil, err
	}
	h := new(signing.Holder)
	if sg != nil {
		h.Set(sg.Default(), nil)
	}
	return h, nil
}

// SigningDirectory returns the key directory (JWK Set) of cfg's
// signing.key identity and signing.publish, as the admin listener serves
// it: for "robotsgate signing directory".
func SigningDirectory(cfg config.Config) ([]byte, error) {
	if cfg.Signing.Agent == "" && cfg.Signing.Key != "" {
		// Public keys only: signing.agent, which names where the
		// directory is, plays no part in it.
		cfg.Signing.Agent = "https://signing-directory.invalid"
	}
	sg, err := signing.NewSigners(&cfg.Signing, nil, time.Now)
	if err != nil {
		return nil, err
	}
	def := sg.Default()
	if def == nil {
		return nil, errors.New("signing.key is not set: no key directory")
	}
	return signing.Directory(sg.DirectoryKeys(signing.AgentHost(def.Agent())))
}

// signedKeyID is the keyid an audit record of st's request with outcome o
// names: the key that signed it, or, for a record made before it is
// forwarded and that does not refuse it, the key that signs it; "" for a
// request refused before it left, or not signed.
func (s *Server) signedKeyID(st *requestState, o outcome) string {
	if st.SignedKeyID != "" || o.auditAs == audit.DecisionBlocked {
		return st.SignedKeyID
	}
	if signer := s.settings(st).signers.ForIdentity(st.identity()); signer != nil {
		return signer.KeyID()
	}
	return ""
}

// signFetches puts the signing.key Signer of sg (none when nil) in force
// for robotsgate's own fetches (robots.txt, tdmrep.json): those go out
// through the transport of [Deps.FetchSigner]. The fetches are shared by
// every user, so a user's own key never signs them. It warns when cfg
// signs but tunnels HTTPS, which cannot be signed.
func (s *Server) signFetches(cfg *config.Config, sg *signing.Signers) {
	def := sg.Default()
	if sg != nil {
		if cfg.HTTPS.Mode == config.HTTPSModeTunnel {
			s.log.Warn().Msg("request signing is on but https.mode is tunnel: HTTPS requests go through unsigned (use mitm to sign them)")
		}
	}
	s.fetchSig.Set(def, func(res string) { s.metrics.Signed("fetch", res) })
}

// directoryKeys returns the keys of the key directory the admin listener
// serves to a request for host (signing.go's DirectoryHandler).
func (s *Server) directoryKeys(host string) []*signing.Key {
	return s.live.Load().signers.DirectoryKeys(host)
}

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
	sg, err := signing.NewSigners(&cfg.Signing, ids, time.Now)
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
		p := PublishedIdentity{User: id.User, Token: cmpOr(id.Agent, cfg.Agent), Purposes: def.Purposes}
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
func publishSigner(p *PublishedIdentity, sg *signing.Signers, s *signing.Signer) error {
	if s == nil {
		return nil
	}
	dir, err := signing.Directory(sg.DirectoryKeys(signing.AgentHost(s.Agent())))
	if err != nil {
		return err
	}
	p.Agent, p.KeyID, p.Directory = s.Agent(), s.KeyID(), dir
	return nil
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
