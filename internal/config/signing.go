package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/websig"
)

// SigningConfig is Web Bot Auth: the HTTP Message Signature robotsgate
// adds to the requests it forwards and to its own policy-file fetches.
// Signing is off unless Key is set (or a credentials-file line sets
// signing_key=).
type SigningConfig struct {
	Key        string             // Ed25519 private key file (PEM PKCS#8 or JWK); "" = off
	Agent      string             // https URL sent in Signature-Agent
	AgentForm  SignatureAgentForm // dictionary | string
	Components []string           // covered besides @authority and Signature-Agent
	Expires    time.Duration      // signature lifetime
	Publish    []string           // further key files listed in the key directory (rotation)
}

// SignatureAgentForm is a value of signing.agent_form.
type SignatureAgentForm string

// Values of signing.agent_form.
const (
	// AgentFormDictionary sends Signature-Agent: sig1="https://…", the
	// member covered as "signature-agent";key="sig1" (draft -01).
	AgentFormDictionary SignatureAgentForm = "dictionary"
	// AgentFormString sends the legacy Signature-Agent: "https://…",
	// covered as "signature-agent", for verifiers of earlier drafts.
	AgentFormString SignatureAgentForm = "string"
)

// Valid reports whether f is a value of signing.agent_form.
func (f SignatureAgentForm) Valid() bool { return f == AgentFormDictionary || f == AgentFormString }

// maxSigningExpires bounds signing.expires ([websig.MaxExpires]).
const maxSigningExpires = websig.MaxExpires

func defaultSigning() SigningConfig {
	return SigningConfig{AgentForm: AgentFormDictionary, Expires: 5 * time.Minute}
}

// validateSigning checks the signing: section. Key files are read when
// the proxy is built (their errors name the key too).
func (c *Config) validateSigning() error {
	s := &c.Signing
	if err := checkMode("signing.agent_form", s.AgentForm, AgentFormDictionary, AgentFormString); err != nil {
		return err
	}
	if s.Expires <= 0 || s.Expires > maxSigningExpires {
		return errorf("signing.expires", "%v is not in (0s, 24h]", s.Expires)
	}
	for i, comp := range s.Components {
		if !slices.Contains(websig.ExtraComponents(), comp) {
			return errorf("signing.components", "%q is not one of %s", comp, strings.Join(websig.ExtraComponents(), ", "))
		}
		if slices.Contains(s.Components[:i], comp) {
			return errorf("signing.components", "%q is listed twice", comp)
		}
	}
	if s.Agent != "" {
		if err := CheckSignatureAgent(s.Agent); err != nil {
			return errorf("signing.agent", "%v", err)
		}
	}
	if s.Key != "" && s.Agent == "" && !c.keysOnly {
		return errorf("signing.agent", "empty, but signing.key is set: a signed request names where its key directory is (https://…)")
	}
	if len(s.Publish) > 0 && s.Key == "" {
		return errorf("signing.publish", "set without signing.key: the directory publishes the keys of signing.key's identity")
	}
	return nil
}

// CheckSignatureAgent reports whether u may be sent in Signature-Agent: an
// absolute https URL with a host, without user info or fragment, and no
// character a URL cannot hold.
func CheckSignatureAgent(u string) error {
	p, err := url.Parse(u)
	bad := strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"<>\\^`{|}", r) })
	if err != nil || bad || p.Scheme != "https" || p.Host == "" || p.User != nil || p.Fragment != "" {
		return fmt.Errorf("%q is not an absolute https URL with a host (no user info, no fragment)", u)
	}
	return nil
}
