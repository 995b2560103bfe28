package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// LeafOrganization is the Organization of the leaf certificates robotsgate
// mints: a client that looks at an intercepted site's certificate sees
// who issued it.
const LeafOrganization = "robotsgate MITM proxy"

// Leaf validity: back-dated for clients with skewed clocks, and shorter
// than the 398 days browsers accept for server certificates.
const (
	leafBackdate = time.Hour
	leafLifetime = 365 * 24 * time.Hour
)

// TLSConfig returns the function that gives the MITM server side of a
// session with host ("name" or "name:port") its TLS configuration: a
// leaf certificate for the host name, signed by ca, from certs (minted
// once per host, see [CertStore]). now is the clock of the validity
// period ([time.Now] when nil).
func TLSConfig(ca *tls.Certificate, certs *CertStore, now func() time.Time) func(host string) (*tls.Config, error) {
	if now == nil {
		now = time.Now
	}
	return func(host string) (*tls.Config, error) {
		name := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			name = h
		}
		name = strings.Trim(name, "[]")
		cert, err := certs.Fetch(name, func() (*tls.Certificate, error) { return signLeaf(ca, name, now()) })
		if err != nil {
			return nil, fmt.Errorf("minting a certificate for %s: %w", name, err)
		}
		return &tls.Config{Certificates: []tls.Certificate{*cert}}, nil
	}
}

// signLeaf mints an ECDSA P-256 server certificate for name (a host name
// or an IP address), valid from now, signed by ca.
func signLeaf(ca *tls.Certificate, name string, now time.Time) (*tls.Certificate, error) {
	issuer := ca.Leaf
	if issuer == nil {
		var err error
		if issuer, err = x509.ParseCertificate(ca.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parsing the CA certificate: %w", err)
		}
	}
	key, serial, err := newKeySerial("leaf")
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{LeafOrganization}, CommonName: name},
		NotBefore:             now.Add(-leafBackdate),
		NotAfter:              now.Add(leafLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), ca.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("signing the leaf certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the leaf certificate: %w", err)
	}
	return &tls.Certificate{Certificate: append([][]byte{der}, ca.Certificate...), PrivateKey: key, Leaf: leaf}, nil
}

// newKeySerial generates an ECDSA P-256 key and a random 127-bit serial
// number for a new certificate; what names the certificate in errors.
func newKeySerial(what string) (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the %s key: %w", what, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("generating the %s serial: %w", what, err)
	}
	return key, serial, nil
}
