package proxy

import (
	"errors"
	"net/http"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
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
