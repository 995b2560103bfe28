package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
	signer := sg.forIdentity(st.identity())
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

// signers are the Signers of one configuration: signing.key's (def), and
// those of the users of the credentials file that name a key or a
// Signature-Agent of their own, by user name. By name, not by the fields
// of the request's Identity: the requests of an MITM session opened
// before a reload carry the Identity of their CONNECT, and are signed
// with the user's identity in force.
type signers struct {
	def     *signing.Signer
	byUser  map[string]*signing.Signer
	publish []*signing.Key // signing.publish
}

// forIdentity returns the Signer of a request of the user id, nil when
// its requests go unsigned.
func (sg *signers) forIdentity(id access.Identity) *signing.Signer {
	if sg == nil {
		return nil
	}
	if s, ok := sg.byUser[id.User]; ok {
		return s
	}
	return sg.def
}

// newSigners loads the keys of cfg and of the identities ids (nil, nil
// when nothing signs). A key that cannot be read, is not Ed25519 or is
// readable by others fails, naming the setting.
func newSigners(cfg *config.Config, ids []access.Identity, now func() time.Time) (*signers, error) {
	c := &cfg.Signing
	opt := signing.Options{Agent: c.Agent, LegacyAgent: c.AgentForm == config.AgentFormString, Components: c.Components,
		Expires: c.Expires, Now: now}
	sg := &signers{byUser: map[string]*signing.Signer{}}
	var defKey *signing.Key
	if c.Key != "" {
		k, err := signing.LoadKey(c.Key)
		if err != nil {
			return nil, fmt.Errorf("signing.key: %w", err)
		}
		if sg.def, err = signing.NewSigner(k, opt); err != nil {
			return nil, fmt.Errorf("signing.key: %w", err)
		}
		defKey = k
	}
	for i, p := range c.Publish {
		k, err := signing.LoadPublishedKey(p)
		if err != nil {
			return nil, fmt.Errorf("signing.publish[%d]: %w", i, err)
		}
		sg.publish = append(sg.publish, k)
	}
	if err := sg.addUsers(ids, defKey, opt); err != nil {
		return nil, err
	}
	if sg.def == nil && len(sg.byUser) == 0 {
		return nil, nil
	}
	return sg, nil
}

// addUsers adds the Signers of the users of ids that have signing fields:
// their key (default defKey) and agent (default opt's), signing as opt
// says otherwise.
func (sg *signers) addUsers(ids []access.Identity, defKey *signing.Key, opt signing.Options) error {
	keys := map[string]*signing.Key{}
	fields := map[string]access.Identity{} // the signing fields of each user seen
	for _, id := range ids {
		if id.SigningKey == "" && id.SignatureAgent == "" {
			continue
		}
		if prev, seen := fields[id.User]; seen {
			if prev.SigningKey != id.SigningKey || prev.SignatureAgent != id.SignatureAgent {
				return fmt.Errorf("auth.credentials_file: user %q: two lines give it different signing identities", id.User)
			}
			continue
		}
		fields[id.User] = id
		k, o := defKey, opt
		if id.SignatureAgent != "" {
			o.Agent = id.SignatureAgent
		}
		if id.SigningKey != "" {
			if k = keys[id.SigningKey]; k == nil {
				var err error
				if k, err = signing.LoadKey(id.SigningKey); err != nil {
					return fmt.Errorf("auth.credentials_file: user %q: signing_key=: %w", id.User, err)
				}
				keys[id.SigningKey] = k
			}
		}
		if k == nil || o.Agent == "" {
			return fmt.Errorf("auth.credentials_file: user %q: a signing identity needs a key (signing_key= or signing.key) and a Signature-Agent (signature_agent= or signing.agent)", id.User)
		}
		s, err := signing.NewSigner(k, o)
		if err != nil {
			return fmt.Errorf("auth.credentials_file: user %q: %w", id.User, err)
		}
		sg.byUser[id.User] = s
	}
	return nil
}

// directory returns the keys of the key directory served to a request for
// host: those of the identities whose Signature-Agent URL is on host, or,
// when none is, signing.key's identity (with signing.publish).
func (sg *signers) directory(host string) []*signing.Key {
	if sg == nil {
		return nil
	}
	var keys []*signing.Key
	for _, s := range sg.byUser {
		if agentHost(s.Agent()) == strings.ToLower(host) {
			keys = append(keys, s.Key())
		}
	}
	slices.SortFunc(keys, func(a, b *signing.Key) int { return strings.Compare(a.ID(), b.ID()) })
	if sg.def != nil && (len(keys) == 0 || agentHost(sg.def.Agent()) == strings.ToLower(host)) {
		keys = append(append([]*signing.Key{sg.def.Key()}, sg.publish...), keys...)
	}
	return keys
}

// agentHost is the host[:port] of a Signature-Agent URL, lower-cased,
// without the default port.
func agentHost(agent string) string {
	u, err := url.Parse(agent)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Host, ":443"))
}

// NewFetchSigner returns the Holder of cfg's signing.key Signer (none
// when signing.key is not set), for a caller without a Server that
// fetches as serve does ("robotsgate check -fetch"): give its
// HTTPFetcher Transport(the fetch transport).
func NewFetchSigner(cfg config.Config) (*signing.Holder, error) {
	sg, err := newSigners(&cfg, nil, time.Now) // signing.key alone: fetches are never a user's
	if err != nil {
		return nil, err
	}
	h := new(signing.Holder)
	if sg != nil {
		h.Set(sg.def, nil)
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
	sg, err := newSigners(&cfg, nil, time.Now)
	if err != nil {
		return nil, err
	}
	if sg == nil || sg.def == nil {
		return nil, errors.New("signing.key is not set: no key directory")
	}
	return signing.Directory(sg.directory(agentHost(sg.def.Agent())))
}

// signedKeyID is the keyid an audit record of st's request with outcome o
// names: the key that signed it, or, for a record made before it is
// forwarded and that does not refuse it, the key that signs it; "" for a
// request refused before it left, or not signed.
func (s *Server) signedKeyID(st *requestState, o outcome) string {
	if st.SignedKeyID != "" || o.auditAs == audit.DecisionBlocked {
		return st.SignedKeyID
	}
	if signer := s.settings(st).signers.forIdentity(st.identity()); signer != nil {
		return signer.KeyID()
	}
	return ""
}

// signFetches puts the signing.key Signer of sg (none when nil) in force
// for robotsgate's own fetches (robots.txt, tdmrep.json): those go out
// through the transport of [Deps.FetchSigner]. The fetches are shared by
// every user, so a user's own key never signs them. It warns when cfg
// signs but tunnels HTTPS, which cannot be signed.
func (s *Server) signFetches(cfg *config.Config, sg *signers) {
	var def *signing.Signer
	if sg != nil {
		def = sg.def
		if cfg.HTTPS.Mode == config.HTTPSModeTunnel {
			s.log.Warn().Msg("request signing is on but https.mode is tunnel: HTTPS requests go through unsigned (use mitm to sign them)")
		}
	}
	s.fetchSig.Set(def, func(res string) { s.metrics.Signed("fetch", res) })
}

// directoryKeys returns the keys of the key directory the admin listener
// serves to a request for host (signing.go's DirectoryHandler).
func (s *Server) directoryKeys(host string) []*signing.Key {
	return s.live.Load().signers.directory(host)
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
	sg, err := newSigners(&cfg, ids, time.Now)
	if err != nil {
		return nil, err
	}
	def := PublishedIdentity{Token: cfg.Agent, Purposes: cfg.Purposes.Names()}
	if err := publishSigner(&def, sg, sg.forIdentity(access.Identity{})); err != nil {
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
		s := sg.forIdentity(id)
		p.OwnSigner = s != nil && (sg == nil || s != sg.def)
		if err := publishSigner(&p, sg, s); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// publishSigner fills in p's signing fields from s (nil: p does not
// sign), the key directory being that of sg for s's Signature-Agent.
func publishSigner(p *PublishedIdentity, sg *signers, s *signing.Signer) error {
	if s == nil {
		return nil
	}
	dir, err := signing.Directory(sg.directory(agentHost(s.Agent())))
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
