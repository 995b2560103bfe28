package signing

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/websig"
)

// Tag is the tag parameter of a Web Bot Auth request signature.
const Tag = "web-bot-auth"

// MaxExpires bounds [Options.Expires] ([websig.MaxExpires]).
const MaxExpires = websig.MaxExpires

// Options are how a Signer signs.
type Options struct {
	// Agent is the https URL sent in Signature-Agent: where verifiers
	// find the key directory.
	Agent string
	// LegacyAgent sends Signature-Agent as a bare String (the form of
	// earlier drafts), covered as "signature-agent", instead of the
	// Dictionary member keyed by the label.
	LegacyAgent bool
	// Components are covered after @authority and Signature-Agent, in
	// this order; each one of [websig.ExtraComponents].
	Components []string
	// Expires is how long after its creation a signature expires; in
	// (0, [MaxExpires]].
	Expires time.Duration
	// Now is the clock; nil means [time.Now].
	Now func() time.Time
	// Nonce returns the nonce of a signature; nil means 64 random bytes
	// in base64.
	Nonce func() (string, error)
}

// Signer signs requests with one key for one Signature-Agent. It is
// immutable and safe for concurrent use.
type Signer struct {
	key *Key
	opt Options
}

// NewSigner returns a Signer of the private key k.
func NewSigner(k *Key, o Options) (*Signer, error) {
	if k == nil || k.priv == nil {
		return nil, errors.New("signing: a private key is required")
	}
	if err := CheckAgent(o.Agent); err != nil {
		return nil, err
	}
	if o.Expires <= 0 || o.Expires > MaxExpires {
		return nil, fmt.Errorf("signing: expires %v is not in (0, %v]", o.Expires, MaxExpires)
	}
	for i, c := range o.Components {
		if !slices.Contains(websig.ExtraComponents(), c) {
			return nil, fmt.Errorf("signing: component %q is not one of %s", c, strings.Join(websig.ExtraComponents(), ", "))
		}
		if slices.Contains(o.Components[:i], c) {
			return nil, fmt.Errorf("signing: component %q listed twice", c)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Nonce == nil {
		o.Nonce = randomNonce
	}
	o.Components = slices.Clone(o.Components)
	return &Signer{key: k, opt: o}, nil
}

// CheckAgent reports whether u may be sent as a Signature-Agent: an
// absolute https URL with a host, no user info and no fragment, that a
// String can carry (printable ASCII).
func CheckAgent(u string) error {
	if u == "" {
		return errors.New("signing: no Signature-Agent URL")
	}
	if !printable(u) || strings.ContainsAny(u, " \"<>\\^`{|}") {
		return fmt.Errorf("signing: Signature-Agent %q has characters a URL cannot hold", u)
	}
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("signing: Signature-Agent %q: %w", u, err)
	}
	if p.Scheme != "https" || p.Host == "" || p.User != nil || p.Fragment != "" || p.RawFragment != "" {
		return fmt.Errorf("signing: Signature-Agent %q is not an absolute https URL with a host (no user info, no fragment)", u)
	}
	return nil
}

// Agent returns the Signature-Agent URL the Signer sends.
func (s *Signer) Agent() string { return s.opt.Agent }

// KeyID returns the keyid of the Signer's signatures.
func (s *Signer) KeyID() string { return s.key.id }

// Key returns the Signer's key.
func (s *Signer) Key() *Key { return s.key }

// ErrConflict is the error of Sign when the request's own signature
// fields leave no way to add robotsgate's signature without breaking
// them: a Signature, Signature-Input or Signature-Agent field that is not
// a Dictionary, or a Signature-Agent already present when the legacy
// String form is configured.
var ErrConflict = errors.New("the request's own signature fields cannot take another signature")

// maxLabels bounds the labels tried for one that the request does not use.
const maxLabels = 64

// Sign adds a Web Bot Auth signature of r to r.Header, in field lines of
// its own (those the client sent are kept as they are), and returns its
// label. The request is signed as it will be sent: its URL's scheme, its
// Host (or URL host) and its URL's request URI.
func (s *Signer) Sign(r *http.Request) (string, error) {
	used, err := usedLabels(r.Header, s.opt.LegacyAgent)
	if err != nil {
		return "", err
	}
	label := ""
	for n := 1; n <= maxLabels && label == ""; n++ {
		if l := "sig" + strconv.Itoa(n); !used[l] {
			label = l
		}
	}
	if label == "" {
		return "", fmt.Errorf("%w: every label sig1..sig%d is taken", ErrConflict, maxLabels)
	}
	sg, agentLine, err := s.signature(r, label)
	if err != nil {
		return "", err
	}
	f, _, err := sg.sign(s.key.priv)
	if err != nil {
		return "", err
	}
	r.Header.Add("Signature-Agent", agentLine)
	r.Header.Add("Signature-Input", f.input)
	r.Header.Add("Signature", f.signature)
	return label, nil
}

// signature builds the signature of r under label, and the
// Signature-Agent line that goes with it.
func (s *Signer) signature(r *http.Request, label string) (*signature, string, error) {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	auth, err := authority(r.URL.Scheme, host)
	if err != nil {
		return nil, "", err
	}
	agent, err := httpsfv.Marshal(httpsfv.NewItem(s.opt.Agent))
	if err != nil {
		return nil, "", fmt.Errorf("Signature-Agent: %w", err)
	}
	sg := &signature{label: label}
	sg.add(component{name: "@authority"}, auth)
	agentLine := agent
	if s.opt.LegacyAgent {
		sg.add(component{name: "signature-agent"}, agent)
	} else {
		sg.add(component{name: "signature-agent", key: label}, agent)
		agentLine = label + "=" + agent
	}
	uri := r.URL.RequestURI()
	path, query, hasQuery := strings.Cut(uri, "?")
	for _, c := range s.opt.Components {
		switch c {
		case "@method":
			sg.add(component{name: c}, r.Method)
		case "@path":
			sg.add(component{name: c}, cmp.Or(path, "/"))
		case "@query":
			sg.add(component{name: c}, "?"+query)
		case "@target-uri":
			if !hasQuery {
				uri = cmp.Or(path, "/")
			}
			sg.add(component{name: c}, r.URL.Scheme+"://"+auth+uri)
		}
	}
	if name := payment.PriceHeaderComponent(r.Header); name != "" {
		// A paying request's price header is covered: origins charge
		// only what the crawler signed for.
		sg.add(component{name: name}, strings.TrimSpace(r.Header.Get(name)))
	}
	now := s.opt.Now()
	nonce, err := s.opt.Nonce()
	if err != nil {
		return nil, "", fmt.Errorf("nonce: %w", err)
	}
	sg.params = requestParams(now, now.Add(s.opt.Expires), s.key.id, nonce)
	return sg, agentLine, nil
}

// add appends the covered component c with its value v.
func (sg *signature) add(c component, v string) {
	sg.covered = append(sg.covered, c)
	sg.values = append(sg.values, v)
}

// requestParams are the signature parameters of a request signature, in
// the order of the draft's examples.
func requestParams(created, expires time.Time, keyid, nonce string) *httpsfv.Params {
	p := httpsfv.NewParams()
	p.Add("created", created.Unix())
	p.Add("keyid", keyid)
	p.Add("alg", "ed25519")
	p.Add("expires", expires.Unix())
	p.Add("nonce", nonce)
	p.Add("tag", Tag)
	return p
}

// usedLabels returns the labels (and Signature-Agent member keys) the
// request's own signature fields use, or [ErrConflict].
func usedLabels(h http.Header, legacy bool) (map[string]bool, error) {
	used := map[string]bool{}
	for _, name := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
		v := h.Values(name)
		if len(v) == 0 {
			continue
		}
		if name == "Signature-Agent" && legacy {
			return nil, fmt.Errorf("%w: the request has a Signature-Agent and signing.agent_form is string", ErrConflict)
		}
		d, err := httpsfv.UnmarshalDictionary(v)
		if err != nil {
			return nil, fmt.Errorf("%w: its %s is not a Dictionary", ErrConflict, name)
		}
		for _, k := range d.Names() {
			used[k] = true
		}
	}
	return used, nil
}

// randomNonce returns 64 random bytes in base64, as the reference
// implementation makes nonces.
func randomNonce() (string, error) {
	var b [64]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}
