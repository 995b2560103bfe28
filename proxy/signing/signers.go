package signing

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/access"
)

// Signers are the Signers of one configuration: signing.key's
// ([Signers.Default]), and those of the users of the credentials file
// that name a key or a Signature-Agent of their own, by user name. By
// name, not by the fields of the request's Identity: the requests of an
// MITM session opened before a reload carry the Identity of their
// CONNECT, and are signed with the user's identity in force.
type Signers struct {
	def     *Signer
	byUser  map[string]*Signer
	publish []*Key // signing.publish
}

// Default returns the Signer of signing.key, nil when it is not set (or
// sg is nil).
func (sg *Signers) Default() *Signer {
	if sg == nil {
		return nil
	}
	return sg.def
}

// ForIdentity returns the Signer of a request of the user id, nil when
// its requests go unsigned.
func (sg *Signers) ForIdentity(id access.Identity) *Signer {
	if sg == nil {
		return nil
	}
	if s, ok := sg.byUser[id.User]; ok {
		return s
	}
	return sg.def
}

// NewSigners loads the keys of c and of the identities ids (nil, nil
// when nothing signs). A key that cannot be read, is not Ed25519 or is
// readable by others fails, naming the setting.
func NewSigners(c *config.SigningConfig, ids []access.Identity, now func() time.Time) (*Signers, error) {
	opt := Options{Agent: c.Agent, LegacyAgent: c.AgentForm == config.AgentFormString, Components: c.Components,
		Expires: c.Expires, Now: now}
	sg := &Signers{byUser: map[string]*Signer{}}
	var defKey *Key
	if c.Key != "" {
		k, err := LoadKey(c.Key)
		if err != nil {
			return nil, fmt.Errorf("signing.key: %w", err)
		}
		if sg.def, err = NewSigner(k, opt); err != nil {
			return nil, fmt.Errorf("signing.key: %w", err)
		}
		defKey = k
	}
	for i, p := range c.Publish {
		k, err := LoadPublishedKey(p)
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
func (sg *Signers) addUsers(ids []access.Identity, defKey *Key, opt Options) error {
	keys := map[string]*Key{}
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
				if k, err = LoadKey(id.SigningKey); err != nil {
					return fmt.Errorf("auth.credentials_file: user %q: signing_key=: %w", id.User, err)
				}
				keys[id.SigningKey] = k
			}
		}
		if k == nil || o.Agent == "" {
			return fmt.Errorf("auth.credentials_file: user %q: a signing identity needs a key (signing_key= or signing.key) and a Signature-Agent (signature_agent= or signing.agent)", id.User)
		}
		s, err := NewSigner(k, o)
		if err != nil {
			return fmt.Errorf("auth.credentials_file: user %q: %w", id.User, err)
		}
		sg.byUser[id.User] = s
	}
	return nil
}

// DirectoryKeys returns the keys of the key directory served to a
// request for host: those of the identities whose Signature-Agent URL is
// on host, or, when none is, signing.key's identity (with
// signing.publish).
func (sg *Signers) DirectoryKeys(host string) []*Key {
	if sg == nil {
		return nil
	}
	var keys []*Key
	for _, s := range sg.byUser {
		if AgentHost(s.Agent()) == strings.ToLower(host) {
			keys = append(keys, s.Key())
		}
	}
	slices.SortFunc(keys, func(a, b *Key) int { return strings.Compare(a.ID(), b.ID()) })
	if sg.def != nil && (len(keys) == 0 || AgentHost(sg.def.Agent()) == strings.ToLower(host)) {
		keys = append(append([]*Key{sg.def.Key()}, sg.publish...), keys...)
	}
	return keys
}

// AgentHost is the host[:port] of a Signature-Agent URL, lower-cased,
// without the default port.
func AgentHost(agent string) string {
	u, err := url.Parse(agent)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Host, ":443"))
}
