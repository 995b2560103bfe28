package signing

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/dunglas/httpsfv"
)

// component is one covered component (RFC 9421 §2): a derived component
// ("@authority") or a field ("signature-agent"), with the parameters
// robotsgate uses: key (a Dictionary member, §2.1.2) and req (the request
// of a response, §2.4).
type component struct {
	name string
	key  string // "" for none
	req  bool
}

// item is c as an Inner List item of Signature-Input.
func (c component) item() httpsfv.Item {
	it := httpsfv.NewItem(c.name)
	if c.key != "" {
		it.Params.Add("key", c.key)
	}
	if c.req {
		it.Params.Add("req", true)
	}
	return it
}

// signature is one signature being made: its label, covered components
// with their values (values[i] is covered[i]'s canonical value), and its
// signature parameters in the order they are serialized.
type signature struct {
	label   string
	covered []component
	values  []string
	params  *httpsfv.Params
}

// paramsValue is the @signature-params value (RFC 9421 §2.3): the Inner
// List of covered components with the signature parameters, which is
// also the member value of Signature-Input.
func (sg *signature) paramsValue() (httpsfv.InnerList, string, error) {
	il := httpsfv.InnerList{Params: sg.params}
	for _, c := range sg.covered {
		il.Items = append(il.Items, c.item())
	}
	s, err := httpsfv.Marshal(il)
	return il, s, err
}

// base is the signature base (RFC 9421 §2.5): one line per covered
// component, "identifier: value", then the @signature-params line; LF
// between lines, none at the end.
func (sg *signature) base() (string, error) {
	if len(sg.covered) != len(sg.values) {
		return "", errors.New("signature base: a covered component has no value")
	}
	var b strings.Builder
	seen := make(map[string]bool, len(sg.covered))
	for i, c := range sg.covered {
		id, err := httpsfv.Marshal(c.item())
		if err != nil {
			return "", fmt.Errorf("signature base: component %q: %w", c.name, err)
		}
		if seen[id] {
			return "", fmt.Errorf("signature base: component %s covered twice", id)
		}
		seen[id] = true
		if !printable(sg.values[i]) {
			return "", fmt.Errorf("signature base: the value of %s is not printable ASCII", id)
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(sg.values[i])
		b.WriteByte('\n')
	}
	_, params, err := sg.paramsValue()
	if err != nil {
		return "", fmt.Errorf("signature base: @signature-params: %w", err)
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(params)
	return b.String(), nil
}

// printable reports whether s holds only VCHAR and SP, and does not start
// or end with a space: a value a base line can carry.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return strings.TrimSpace(s) == s
}

// fields are the Signature-Input and Signature member lines of one
// signature: each a one-member Dictionary, "label=...".
type fields struct {
	input, signature string
}

// sign signs sg with priv (Ed25519 over the signature base, RFC 9421
// §3.3.6) and returns its field lines and its base.
func (sg *signature) sign(priv ed25519.PrivateKey) (fields, string, error) {
	base, err := sg.base()
	if err != nil {
		return fields{}, "", err
	}
	il, _, err := sg.paramsValue()
	if err != nil {
		return fields{}, "", err
	}
	in := httpsfv.NewDictionary()
	in.Add(sg.label, il)
	sig := httpsfv.NewDictionary()
	sig.Add(sg.label, httpsfv.NewItem(ed25519.Sign(priv, []byte(base))))
	var f fields
	if f.input, err = httpsfv.Marshal(in); err != nil {
		return fields{}, "", fmt.Errorf("Signature-Input: %w", err)
	}
	if f.signature, err = httpsfv.Marshal(sig); err != nil {
		return fields{}, "", fmt.Errorf("Signature: %w", err)
	}
	return f, base, nil
}

// authority is the @authority value (RFC 9421 §2.2.3) of the host[:port]
// hostport reached with scheme: the host lower-cased, the scheme's
// default port left out.
func authority(scheme, hostport string) (string, error) {
	hostport = strings.ToLower(hostport)
	if hostport == "" {
		return "", errors.New("@authority: the request has no host")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil { // no port
		return hostport, nil
	}
	if port == "" || port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		if strings.Contains(host, ":") {
			return "[" + host + "]", nil
		}
		return host, nil
	}
	return hostport, nil
}
