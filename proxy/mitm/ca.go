// Package mitm holds what HTTPS interception needs: robotsgate's CA
// ([LoadOrCreateCA]), the store of minted leaf certificates ([CertStore]) and
// the extra roots trusted for upstream TLS ([UpstreamRootCAs]).
package mitm

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The files of the CA robotsgate generates, in its data directory. They
// follow mitmproxy's convention: one private file holding key and
// certificate together (so that a crash or a concurrent start can never
// pair a key with the wrong certificate), and one public file holding the
// certificate only, which is what clients are told to trust.
const (
	// CAKeyFileName holds the CA's private key and certificate (mode 0600).
	CAKeyFileName = "robotsgate-ca.pem"
	// CACertFileName holds the CA certificate only (mode 0644).
	CACertFileName = "robotsgate-ca-cert.pem"
)

// caValidityYears is the lifetime of a generated CA certificate, in
// years from its creation.
const caValidityYears = 10

// caBackdate is how far before its creation a generated CA is valid from.
// goproxy backdates the leaf certificates it mints by 30 days; the CA
// covers that so that every leaf lies inside its issuer's validity.
const caBackdate = 31 * 24 * time.Hour

// CAInfo describes the CA that signs robotsgate's leaf certificates.
type CAInfo struct {
	// CertFile is the PEM file of the CA certificate to give to clients.
	CertFile string
	// KeyFile is the PEM file holding the CA's private key (for a
	// generated CA it also holds the certificate).
	KeyFile string
	// Generated reports whether this is robotsgate's own CA (false for a
	// custom CA from https.ca_cert/https.ca_key).
	Generated bool
	// Created reports whether this call created the CA.
	Created bool
	// Subject is the CA certificate's subject.
	Subject string
	// Fingerprint is the SHA-256 of the CA certificate's DER bytes,
	// upper-case hex in colon-separated pairs (as openssl prints it).
	Fingerprint string
	// NotAfter is when the CA certificate expires.
	NotAfter time.Time
}

// LoadOrCreateCA returns the CA robotsgate signs leaf certificates with.
//
// When certFile and keyFile are both set they name a custom CA (PEM
// certificate, PEM private key), which is loaded and checked: it must be a
// CA certificate, currently valid at now(), whose public key matches the
// key. Setting only one of them is an error.
//
// Otherwise the CA lives in dir ([defaultDataDir] when dir is ""; of a
// dir given, only the last directory is created, so that a mistyped path
// is an error rather than a new CA): it is
// loaded from CAKeyFileName if that file exists and created there
// otherwise (ECDSA P-256, valid for [caValidityYears]). Creation is atomic: the
// private file is written to a temporary file and linked into place only
// when complete, so a crash leaves either no CA or a whole one, and of two
// processes creating it at once one wins and the other loads the winner's
// CA. CACertFileName is (re)written from the private file whenever it is
// missing or differs.
//
// Private key files must not be readable by group or others (checked on
// Unix): robotsgate refuses to start with such a key rather than fixing
// the mode silently, because the key may already have been copied.
func LoadOrCreateCA(dir, certFile, keyFile string, now func() time.Time) (*tls.Certificate, CAInfo, error) {
	if now == nil {
		now = time.Now
	}
	switch {
	case certFile != "" && keyFile != "":
		return loadCustomCA(certFile, keyFile, now())
	case certFile != "" || keyFile != "":
		return nil, CAInfo{}, errors.New("https.ca_cert and https.ca_key must be set together")
	}
	if dir == "" {
		d, err := defaultDataDir()
		if err != nil {
			return nil, CAInfo{}, err
		}
		ca, info, err := loadOrCreateGeneratedCA(d, now(), os.MkdirAll)
		return ca, info, defaultDirError(err, d) // (datadir.go)
	}
	return loadOrCreateGeneratedCA(dir, now(), makeLastDir) // (datadir.go)
}

func loadCustomCA(certFile, keyFile string, now time.Time) (*tls.Certificate, CAInfo, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, CAInfo{}, fmt.Errorf("https.ca_cert: %w", err)
	}
	keyPEM, err := readKeyFile(keyFile, "https.ca_key")
	if err != nil {
		return nil, CAInfo{}, err
	}
	ca, err := parseCA(certPEM, keyPEM, certFile, keyFile, now)
	if err != nil {
		return nil, CAInfo{}, err
	}
	return ca, describeCA(ca, certFile, keyFile, false, false), nil
}

// loadOrCreateGeneratedCA loads the CA in dir, or creates it there, dir
// made by mkdir first.
func loadOrCreateGeneratedCA(dir string, now time.Time, mkdir func(string, os.FileMode) error) (*tls.Certificate, CAInfo, error) {
	keyFile := filepath.Join(dir, CAKeyFileName)
	certFile := filepath.Join(dir, CACertFileName)
	created := false
	if _, err := os.Stat(keyFile); errors.Is(err, fs.ErrNotExist) {
		if err := mkdir(dir, 0o700); err != nil {
			return nil, CAInfo{}, fmt.Errorf("https.data_dir %s: %w", dir, err)
		}
		pemBytes, err := newCAPEM(now)
		if err != nil {
			return nil, CAInfo{}, err
		}
		created, err = writeNewFile(keyFile, pemBytes, 0o600)
		if err != nil {
			return nil, CAInfo{}, fmt.Errorf("writing the CA: %w", err)
		}
	} else if err != nil {
		return nil, CAInfo{}, fmt.Errorf("https.data_dir %s: %w", dir, err)
	}

	data, err := readKeyFile(keyFile, "CA key file")
	if err != nil {
		return nil, CAInfo{}, err
	}
	ca, err := parseCA(data, data, keyFile, keyFile, now)
	if err != nil {
		return nil, CAInfo{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Certificate[0]})
	if old, err := os.ReadFile(certFile); err != nil || !bytes.Equal(old, certPEM) {
		if err := writeFileAtomic(certFile, certPEM, 0o644); err != nil {
			return nil, CAInfo{}, fmt.Errorf("writing the CA certificate: %w", err)
		}
	}
	return ca, describeCA(ca, certFile, keyFile, true, created), nil
}

// newCAPEM generates an ECDSA P-256 CA and returns its key and certificate
// as PEM, key first.
func newCAPEM(now time.Time) ([]byte, error) {
	key, serial, err := newKeySerial("CA")
	if err != nil {
		return nil, err
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	ski := sha256.Sum256(spki)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Organization: []string{"robotsgate"},
			CommonName:   "robotsgate CA " + hex.EncodeToString(ski[:4]),
		},
		NotBefore:             now.Add(-caBackdate),
		NotAfter:              now.AddDate(caValidityYears, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		SubjectKeyId:          ski[:20],
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("creating the CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	return b.Bytes(), nil
}

// parseCA parses a CA certificate (chain) and its private key from PEM and
// checks that they belong together and can sign leaf certificates at now.
func parseCA(certPEM, keyPEM []byte, certFile, keyFile string, now time.Time) (*tls.Certificate, error) {
	var certDER [][]byte
	var keyBlock *pem.Block
	for rest := certPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			certDER = append(certDER, b.Bytes)
		}
	}
	for rest := keyPEM; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "PRIVATE KEY" || strings.HasSuffix(b.Type, " PRIVATE KEY") {
			keyBlock = b
			break
		}
	}
	if len(certDER) == 0 {
		return nil, fmt.Errorf("CA certificate %s: no PEM CERTIFICATE block found", certFile)
	}
	if keyBlock == nil {
		return nil, fmt.Errorf("CA key %s: no PEM PRIVATE KEY block found", keyFile)
	}
	leaf, err := x509.ParseCertificate(certDER[0])
	if err != nil {
		return nil, fmt.Errorf("CA certificate %s: %w", certFile, err)
	}
	if !leaf.BasicConstraintsValid || !leaf.IsCA {
		return nil, fmt.Errorf("CA certificate %s (%s) is not a CA certificate (basic constraints CA:TRUE missing)", certFile, leaf.Subject)
	}
	if leaf.KeyUsage != 0 && leaf.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("CA certificate %s (%s) may not sign certificates (key usage lacks keyCertSign)", certFile, leaf.Subject)
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("CA certificate %s (%s) is not valid now: valid from %s to %s",
			certFile, leaf.Subject, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	key, err := parsePrivateKey(keyBlock)
	if err != nil {
		return nil, fmt.Errorf("CA key %s: %w", keyFile, err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return nil, fmt.Errorf("CA key %s does not match the certificate %s (%s)", keyFile, certFile, leaf.Subject)
	}
	return &tls.Certificate{Certificate: certDER, PrivateKey: key, Leaf: leaf}, nil
}

// parsePrivateKey parses a PKCS#8, SEC 1 (EC) or PKCS#1 (RSA) key of a type
// goproxy can sign leaf certificates with.
func parsePrivateKey(b *pem.Block) (crypto.Signer, error) {
	if x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck // only detecting, never decrypting
		return nil, errors.New("encrypted private keys are not supported; decrypt it first (openssl pkey -in KEY -out KEY.plain)")
	}
	var k any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	default:
		return nil, fmt.Errorf("unsupported private key type %T", k)
	}
}

// readKeyFile reads a private key file once [checkKeyMode] accepts it;
// what names the file in a read error.
func readKeyFile(keyFile, what string) ([]byte, error) {
	if err := checkKeyMode(keyFile); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// checkKeyMode refuses a private key file that group or others may read.
func checkKeyMode(keyFile string) error {
	fi, err := os.Stat(keyFile)
	if err != nil {
		return fmt.Errorf("CA key file: %w", err)
	}
	if runtime.GOOS == "windows" {
		return nil // mode bits do not describe Windows ACLs
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("CA key file %s has mode %04o: group or others can read the private key; "+
			"run `chmod 600 %s` (and treat the key as compromised if others had access)", keyFile, perm, keyFile)
	}
	return nil
}

func describeCA(ca *tls.Certificate, certFile, keyFile string, generated, created bool) CAInfo {
	return CAInfo{
		CertFile:    certFile,
		KeyFile:     keyFile,
		Generated:   generated,
		Created:     created,
		Subject:     ca.Leaf.Subject.String(),
		Fingerprint: Fingerprint(ca.Leaf),
		NotAfter:    ca.Leaf.NotAfter,
	}
}

// Fingerprint returns the SHA-256 fingerprint of cert as colon-separated
// upper-case hex, e.g. "AB:CD:...".
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// writeNewFile writes data to a temporary file next to name, syncs it and
// links it to name only if name does not exist yet. It reports whether
// this call created name; false (and no error) means another writer got
// there first and its file was kept.
func writeNewFile(name string, data []byte, perm os.FileMode) (bool, error) {
	tmp, err := writeTemp(name, data, perm)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		// No hard links on this file system: a rename is still atomic
		// against crashes, only not against a concurrent creator.
		if _, serr := os.Lstat(name); serr == nil {
			return false, nil
		}
		if rerr := os.Rename(tmp, name); rerr != nil {
			return false, fmt.Errorf("%w (and rename: %v)", err, rerr)
		}
	}
	syncDir(filepath.Dir(name))
	return true, nil
}

// writeFileAtomic replaces name with data through a temporary file and a
// rename, so readers see the old or the new content, never a part.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(name, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(name))
	return nil
}

func writeTemp(name string, data []byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// syncDir makes a rename or link in dir durable; errors are ignored
// because not every platform can sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// UpstreamRootCAs returns the roots robotsgate trusts for upstream TLS:
// the system roots plus every certificate in the PEM files (config
// https.upstream_roots). A file that cannot be read or holds no
// certificate is an error.
func UpstreamRootCAs(files []string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("https.upstream_roots: %w", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("https.upstream_roots: %s holds no PEM certificate", f)
		}
	}
	return pool, nil
}
