package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// caTestNow is the tests' "now". Certificates made here are also checked
// by code that reads the real clock (the server's start-up), so it is the
// real time, truncated to the second that X.509 encodes; a fixed date would
// make those certificates expire on a calendar day.
var caTestNow = time.Now().UTC().Truncate(time.Second)

func fixedNow() time.Time { return caTestNow }

func TestCACreateAndReuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ca, info, err := LoadOrCreateCA(dir, "", "", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Created || !info.Generated {
		t.Fatalf("first start: Created=%v Generated=%v, want both true", info.Created, info.Generated)
	}
	leaf := ca.Leaf
	if k, ok := ca.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Fatalf("CA key is %T, want ECDSA P-256", ca.PrivateKey)
	}
	if !leaf.IsCA || leaf.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Fatalf("generated certificate is not a signing CA: IsCA=%v usage=%v", leaf.IsCA, leaf.KeyUsage)
	}
	if want := caTestNow.AddDate(10, 0, 0); !leaf.NotAfter.Equal(want) {
		t.Fatalf("NotAfter = %v, want 10 years from now (%v)", leaf.NotAfter, want)
	}
	if !leaf.NotBefore.Before(caTestNow.Add(-30 * 24 * time.Hour)) {
		t.Fatalf("NotBefore %v does not cover goproxy's 30-day backdated leaves", leaf.NotBefore)
	}
	testsupport.AssertMode(t, info.KeyFile, 0o600)
	testsupport.AssertMode(t, info.CertFile, 0o644)

	// The public file holds the certificate and nothing else.
	pub, err := os.ReadFile(info.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(pub), "PRIVATE KEY") {
		t.Fatal("public CA file contains the private key")
	}

	// Restart: same CA.
	ca2, info2, err := LoadOrCreateCA(dir, "", "", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if info2.Created {
		t.Fatal("second start created a new CA")
	}
	if info2.Fingerprint != info.Fingerprint || Fingerprint(ca2.Leaf) != info.Fingerprint {
		t.Fatalf("fingerprint changed across restarts: %s -> %s", info.Fingerprint, info2.Fingerprint)
	}

	// A deleted or tampered public file is rewritten from the private one.
	if err := os.WriteFile(info.CertFile, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateCA(dir, "", "", fixedNow); err != nil {
		t.Fatal(err)
	}
	pub2, _ := os.ReadFile(info.CertFile)
	if string(pub2) != string(pub) {
		t.Fatal("tampered public CA file was not restored")
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("data dir holds %v, want just the two CA files", names)
	}
}

func TestCAConcurrentCreateAgrees(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	fps := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, info, err := LoadOrCreateCA(dir, "", "", fixedNow)
			fps[i], errs[i] = info.Fingerprint, err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if fps[i] != fps[0] {
			t.Fatalf("concurrent starts got different CAs: %s vs %s", fps[i], fps[0])
		}
	}
}

func TestCAKeyModeRefused(t *testing.T) {
	dir := t.TempDir()
	_, info, err := LoadOrCreateCA(dir, "", "", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(info.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = LoadOrCreateCA(dir, "", "", fixedNow)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key: err = %v, want a refusal naming chmod 600", err)
	}
}

func TestCADataDirUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use a path under a regular file.
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadOrCreateCA(filepath.Join(f, "sub"), "", "", fixedNow); err == nil || !strings.Contains(err.Error(), "https.data_dir") {
			t.Fatalf("err = %v, want an https.data_dir error", err)
		}
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateCA(filepath.Join(dir, "sub"), "", "", fixedNow); err == nil {
		t.Fatal("unwritable data dir: no error")
	}
}

func TestCACustom(t *testing.T) {
	dir := t.TempDir()
	certA, keyA := testsupport.WriteCert(t, dir, "a", true, caTestNow)
	_, keyB := testsupport.WriteCert(t, dir, "b", true, caTestNow)
	plainCert, plainKey := testsupport.WriteCert(t, dir, "plain", false, caTestNow)
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a pem file\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ca, info, err := LoadOrCreateCA(filepath.Join(dir, "unused"), certA, keyA, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if info.Generated || info.Created || info.CertFile != certA || ca.Leaf.Subject.CommonName != "a" {
		t.Fatalf("custom CA info = %+v", info)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); err == nil {
		t.Fatal("a custom CA still created the data dir")
	}
	// The custom CA can mint leaves the way goproxy does.
	if _, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Certificate[0]}), mustRead(t, keyA)); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, cert, key, want string
	}{
		{"mismatch", certA, keyB, "does not match"},
		{"not a CA", plainCert, plainKey, "not a CA certificate"},
		{"bad cert PEM", bad, keyA, "no PEM CERTIFICATE"},
		{"bad key PEM", certA, bad, "no PEM PRIVATE KEY"},
		{"missing file", filepath.Join(dir, "nope.crt"), keyA, "no such file"},
		{"only cert", certA, "", "must be set together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadOrCreateCA(dir, tc.cert, tc.key, fixedNow)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}

	// Expired custom CA.
	_, _, err = LoadOrCreateCA(dir, certA, keyA, func() time.Time { return caTestNow.Add(48 * time.Hour) })
	if err == nil || !strings.Contains(err.Error(), "not valid now") {
		t.Fatalf("expired CA: err = %v", err)
	}
}

func TestUpstreamRootCAs(t *testing.T) {
	dir := t.TempDir()
	certA, _ := testsupport.WriteCert(t, dir, "root", true, caTestNow)
	pool, err := UpstreamRootCAs([]string{certA})
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pemBlock(t, mustRead(t, certA)))
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: caTestNow}); err != nil {
		t.Fatalf("extra root not trusted: %v", err)
	}
	if _, err := UpstreamRootCAs([]string{filepath.Join(dir, "missing.pem")}); err == nil {
		t.Fatal("missing root file: no error")
	}
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("nothing"), 0o644)
	if _, err := UpstreamRootCAs([]string{empty}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("empty root file: err = %v", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pemBlock(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}
