// Package signing signs robotsgate's outbound requests for Web Bot Auth
// (draft-ietf-webbotauth-httpsig-protocol-01): HTTP Message Signatures
// (RFC 9421) with Ed25519 keys, the Signature-Agent field, and the key
// directory (a JWK Set) that verifiers fetch, with its own response
// signature. It reads and writes key files; it knows nothing of the
// proxy's pipeline.
package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Key is an Ed25519 key: a private one that signs, or a public one that
// is only published (key rotation). A Key is immutable.
type Key struct {
	priv ed25519.PrivateKey // nil for a public key
	pub  ed25519.PublicKey
	id   string // the JWK SHA-256 thumbprint of pub (keyid)
}

// KeyError is a key file that cannot be used; Path names it.
type KeyError struct {
	Path    string
	Problem string
	Err     error // the cause, if any
}

func (e *KeyError) Error() string {
	msg := e.Path + ": " + e.Problem
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *KeyError) Unwrap() error { return e.Err }

// maxKeyFile bounds what is read of a key file: a PEM or JWK Ed25519 key
// is well under 1 KiB.
const maxKeyFile = 64 << 10

// LoadKey reads the private Ed25519 key of path: PEM PKCS#8 ("PRIVATE
// KEY", as `openssl genpkey -algorithm ed25519` writes it) or a JWK
// ({"kty":"OKP","crv":"Ed25519","d":...,"x":...}). The file must not be
// readable by its group or by others.
func LoadKey(path string) (*Key, error) {
	k, err := loadKeyFile(path)
	if err != nil {
		return nil, err
	}
	if k.priv == nil {
		return nil, &KeyError{Path: path, Problem: "holds a public key: signing needs the private key"}
	}
	return k, nil
}

// LoadPublishedKey reads a key to publish in the directory: a private key
// as [LoadKey] reads it (and as strictly protected), or a public one (PEM
// "PUBLIC KEY" or a JWK without "d").
func LoadPublishedKey(path string) (*Key, error) { return loadKeyFile(path) }

// loadKeyFile reads and parses the key of path, checking the file's
// permissions when it holds a private key.
func loadKeyFile(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "cannot read the key file", Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "cannot read the key file", Err: err}
	}
	if !fi.Mode().IsRegular() {
		return nil, &KeyError{Path: path, Problem: "is not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "cannot read the key file", Err: err}
	}
	if len(b) > maxKeyFile {
		return nil, &KeyError{Path: path, Problem: "is too large for a key file"}
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "is not an Ed25519 key", Err: err}
	}
	if k.priv != nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, &KeyError{Path: path, Problem: fmt.Sprintf("holds a private key but its mode is %04o: it must not be readable by group or others (chmod 600)", fi.Mode().Perm())}
	}
	return k, nil
}

// ParseKey parses an Ed25519 key: PEM PKCS#8 "PRIVATE KEY", PEM PKIX
// "PUBLIC KEY", or a JWK (private when it has "d").
func ParseKey(b []byte) (*Key, error) {
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "{") {
		return parseJWK([]byte(trimmed))
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("neither PEM nor a JWK")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PKCS#8: %w", err)
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("the PKCS#8 key is a %T, not Ed25519", k)
		}
		return newKey(priv), nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("the public key is a %T, not Ed25519", k)
		}
		return newPublicKey(pub), nil
	}
	return nil, fmt.Errorf("PEM block %q: want PRIVATE KEY (PKCS#8) or PUBLIC KEY", block.Type)
}

// jwk is a JSON Web Key as robotsgate reads and writes it; the field
// order is the order of the directory's members.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
	Use string `json:"use,omitempty"`
}

// parseJWK parses an OKP Ed25519 JWK; a private one's x must be the
// public key of its d.
func parseJWK(b []byte) (*Key, error) {
	var j jwk
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("JWK: %w", err)
	}
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return nil, fmt.Errorf("JWK kty %q crv %q: want OKP and Ed25519", j.Kty, j.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(j.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, errors.New(`JWK "x" is not a base64url Ed25519 public key`)
	}
	if j.D == "" {
		return newPublicKey(ed25519.PublicKey(x)), nil
	}
	d, err := base64.RawURLEncoding.DecodeString(j.D)
	if err != nil || len(d) != ed25519.SeedSize {
		return nil, errors.New(`JWK "d" is not a base64url Ed25519 private key (32 bytes)`)
	}
	k := newKey(ed25519.NewKeyFromSeed(d))
	if !k.pub.Equal(ed25519.PublicKey(x)) {
		return nil, errors.New(`JWK "x" is not the public key of its "d"`)
	}
	return k, nil
}

func newKey(priv ed25519.PrivateKey) *Key {
	k := newPublicKey(priv.Public().(ed25519.PublicKey))
	k.priv = priv
	return k
}

func newPublicKey(pub ed25519.PublicKey) *Key {
	return &Key{pub: pub, id: Thumbprint(pub)}
}

// ID returns the key's JWK SHA-256 thumbprint, the keyid of its
// signatures.
func (k *Key) ID() string { return k.id }

// Public returns k's public key.
func (k *Key) Public() ed25519.PublicKey { return k.pub }

// Private reports whether k can sign.
func (k *Key) Private() bool { return k.priv != nil }

// Thumbprint returns the JWK SHA-256 thumbprint (RFC 7638) of an Ed25519
// public key, with the members RFC 8037 A.3 names (crv, kty, x) in
// lexicographic order, base64url without padding.
func Thumbprint(pub ed25519.PublicKey) string {
	in := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(in))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// publicJWK is k's public key as a directory lists it.
func (k *Key) publicJWK() jwk {
	return jwk{Kty: "OKP", Crv: "Ed25519", Kid: k.id, X: base64.RawURLEncoding.EncodeToString(k.pub), Use: "sig"}
}

// GenerateKey makes a new Ed25519 key from rand and writes it to path as
// PEM PKCS#8, mode 0600. It never overwrites an existing file.
func GenerateKey(path string, rand io.Reader) (*Key, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "cannot create the key file", Err: err}
	}
	werr := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return nil, &KeyError{Path: path, Problem: "cannot write the key file", Err: werr}
	}
	return newKey(priv), nil
}

// Sign returns the Ed25519 signature of msg; k must be private. It signs
// robotsgate's audit digests.
func (k *Key) Sign(msg []byte) []byte { return ed25519.Sign(k.priv, msg) }
