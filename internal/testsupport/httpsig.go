package testsupport

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// This file is a verifier of HTTP Message Signatures (RFC 9421) for Web
// Bot Auth (draft-ietf-webbotauth-httpsig-protocol-01), written from the
// RFC's text for tests, apart from robotsgate's signing code: it shares
// nothing with it but the structured-field library.

// SigRequest is a request as its receiver sees it: the values the
// derived components come from, and its header fields.
type SigRequest struct {
	Method    string
	Scheme    string // http or https
	Authority string // the Host the request names, as sent
	Target    string // the request target (origin form: path and query)
	Header    http.Header
}

// SigRequestOf is the [SigRequest] of r as a server received it.
func SigRequestOf(r *http.Request, scheme string) SigRequest {
	return SigRequest{Method: r.Method, Scheme: scheme, Authority: r.Host, Target: r.RequestURI, Header: r.Header}
}

// VerifiedSig is what [VerifyWebBotAuth] found.
type VerifiedSig struct {
	Label  string
	KeyID  string
	Agent  string // the Signature-Agent member the signature covers
	Covers []string
	Base   string
}

// VerifyWebBotAuth verifies the Web Bot Auth signature labelled label of
// req (label "": the only one) with the Ed25519 public key pub, at time
// now: RFC 9421 §3.2 with the draft's requirements (tag web-bot-auth,
// created, expires and keyid present, keyid the key's thumbprint,
// @authority and the Signature-Agent member of the label covered).
func VerifyWebBotAuth(req SigRequest, label string, pub ed25519.PublicKey, now time.Time) (VerifiedSig, error) {
	inputs, err := httpsfv.UnmarshalDictionary(req.Header.Values("Signature-Input"))
	if err != nil {
		return VerifiedSig{}, fmt.Errorf("Signature-Input: %w", err)
	}
	sigs, err := httpsfv.UnmarshalDictionary(req.Header.Values("Signature"))
	if err != nil {
		return VerifiedSig{}, fmt.Errorf("Signature: %w", err)
	}
	if label == "" {
		if len(inputs.Names()) != 1 {
			return VerifiedSig{}, fmt.Errorf("want one signature, have labels %v", inputs.Names())
		}
		label = inputs.Names()[0]
	}
	m, ok := inputs.Get(label)
	il, isList := m.(httpsfv.InnerList)
	if !ok || !isList {
		return VerifiedSig{}, fmt.Errorf("Signature-Input has no inner list %q", label)
	}
	sm, ok := sigs.Get(label)
	sigItem, isItem := sm.(httpsfv.Item)
	sig, isBytes := sigItem.Value.([]byte)
	if !ok || !isItem || !isBytes {
		return VerifiedSig{}, fmt.Errorf("Signature has no byte sequence %q", label)
	}
	v := VerifiedSig{Label: label}
	if err := checkWBAParams(il.Params, pub, now, &v); err != nil {
		return v, err
	}
	if v.Base, err = sigBase(req, il, &v); err != nil {
		return v, err
	}
	if !strings.Contains(strings.Join(v.Covers, " "), "@authority") || v.Agent == "" {
		return v, fmt.Errorf("covers %v: not @authority and the Signature-Agent member of %q", v.Covers, label)
	}
	if !ed25519.Verify(pub, []byte(v.Base), sig) {
		return v, errors.New("the Ed25519 signature does not verify")
	}
	return v, nil
}

// checkWBAParams checks the signature parameters the draft requires.
func checkWBAParams(p *httpsfv.Params, pub ed25519.PublicKey, now time.Time, v *VerifiedSig) error {
	get := func(k string) any { x, _ := p.Get(k); return x }
	if get("tag") != "web-bot-auth" {
		return fmt.Errorf("tag %v is not web-bot-auth", get("tag"))
	}
	if a := get("alg"); a != nil && a != "ed25519" {
		return fmt.Errorf("alg %v", a)
	}
	created, ok1 := get("created").(int64)
	expires, ok2 := get("expires").(int64)
	if !ok1 || !ok2 {
		return errors.New("created or expires missing")
	}
	if created > now.Unix() || expires < now.Unix() || expires-created > 24*3600 {
		return fmt.Errorf("created %d, expires %d: not valid at %d (or longer than 24h)", created, expires, now.Unix())
	}
	v.KeyID, _ = get("keyid").(string)
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	if want := base64.RawURLEncoding.EncodeToString(sum[:]); v.KeyID != want {
		return fmt.Errorf("keyid %q is not the key's thumbprint %q", v.KeyID, want)
	}
	return nil
}

// sigBase rebuilds the signature base of il (RFC 9421 §2.5).
func sigBase(req SigRequest, il httpsfv.InnerList, v *VerifiedSig) (string, error) {
	var b strings.Builder
	for _, it := range il.Items {
		name, _ := it.Value.(string)
		id, err := httpsfv.Marshal(it)
		if err != nil {
			return "", err
		}
		val, err := componentValue(req, name, it.Params)
		if err != nil {
			return "", fmt.Errorf("%s: %w", id, err)
		}
		if name == "signature-agent" {
			if k, _ := it.Params.Get("key"); k == v.Label {
				v.Agent = val
			}
		}
		v.Covers = append(v.Covers, id)
		b.WriteString(id + ": " + val + "\n")
	}
	params, err := httpsfv.Marshal(il)
	if err != nil {
		return "", err
	}
	b.WriteString(`"@signature-params": ` + params)
	return b.String(), nil
}

// componentValue is the value of one covered component of req.
func componentValue(req SigRequest, name string, p *httpsfv.Params) (string, error) {
	path, query, hasQuery := strings.Cut(req.Target, "?")
	switch name {
	case "@method":
		return req.Method, nil
	case "@authority":
		return normAuthority(req.Scheme, req.Authority), nil
	case "@path":
		if path == "" {
			path = "/"
		}
		return path, nil
	case "@query":
		return "?" + query, nil
	case "@target-uri":
		t := path
		if hasQuery {
			t += "?" + query
		}
		return req.Scheme + "://" + normAuthority(req.Scheme, req.Authority) + t, nil
	}
	if strings.HasPrefix(name, "@") {
		return "", errors.New("unknown derived component")
	}
	vals := req.Header.Values(name)
	if len(vals) == 0 {
		return "", errors.New("field absent")
	}
	key, hasKey := p.Get("key")
	if !hasKey {
		for i := range vals {
			vals[i] = strings.TrimSpace(vals[i])
		}
		return strings.Join(vals, ", "), nil
	}
	d, err := httpsfv.UnmarshalDictionary(vals)
	if err != nil {
		return "", err
	}
	m, ok := d.Get(key.(string))
	if !ok {
		return "", fmt.Errorf("no member %v", key)
	}
	item, ok := m.(httpsfv.Item)
	if !ok {
		return "", fmt.Errorf("member %v is an inner list", key)
	}
	return httpsfv.Marshal(item)
}

// normAuthority lower-cases host[:port] and drops the scheme's default
// port.
func normAuthority(scheme, hostport string) string {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		return hostport
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
