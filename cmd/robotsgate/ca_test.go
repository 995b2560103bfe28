package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

func runCATest(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runCAEnv(args, testsupport.EnvMap(env), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCACommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	code, out, errs := runCATest(t, nil, "-data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	certFile := filepath.Join(dir, mitm.CACertFileName)
	for _, want := range []string{
		certFile + " (created now)",
		"curl --cacert " + certFile,
		"REQUESTS_CA_BUNDLE=" + certFile,
		"NODE_EXTRA_CA_CERTS=" + certFile,
		"SSL_CERT_FILE=" + certFile,
		"keytool -importcert",
		"/usr/local/share/ca-certificates/robotsgate.crt && sudo update-ca-certificates",
		"HTTPS_PROXY=http://127.0.0.1:9309",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Second run: the same CA, reported as existing; -pem prints it.
	code, out2, _ := runCATest(t, nil, "-data-dir", dir)
	if code != 0 || !strings.Contains(out2, "(existing)") {
		t.Fatalf("second run: exit %d\n%s", code, out2)
	}
	code, pemOut, _ := runCATest(t, nil, "-pem", "-data-dir", dir)
	if code != 0 {
		t.Fatalf("-pem: exit %d", code)
	}
	b, rest := pem.Decode([]byte(pemOut))
	if b == nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("-pem output is not exactly one PEM block: %q", pemOut)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if fp := mitm.Fingerprint(cert); !strings.Contains(out, fp) || !strings.Contains(out2, fp) {
		t.Fatalf("-pem certificate %s is not the one reported", fp)
	}
	if onDisk, _ := os.ReadFile(certFile); string(onDisk) != pemOut {
		t.Fatal("-pem output differs from the certificate file")
	}
}

func TestCACommandConfigLayering(t *testing.T) {
	base := t.TempDir()
	fromEnv := filepath.Join(base, "env")
	fromFile := filepath.Join(base, "file")
	cfgFile := filepath.Join(base, "robotsgate.yaml")
	if err := os.WriteFile(cfgFile, []byte("https:\n  data_dir: "+fromFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The YAML file's https.data_dir.
	if code, out, errs := runCATest(t, nil, "-config", cfgFile); code != 0 || !strings.Contains(out, fromFile) {
		t.Fatalf("config file: exit %d %s\n%s", code, errs, out)
	}
	// The environment beats the file.
	env := map[string]string{"ROBOTSGATE_CONFIG": cfgFile, "ROBOTSGATE_DATA_DIR": fromEnv}
	if code, out, errs := runCATest(t, env); code != 0 || !strings.Contains(out, fromEnv) {
		t.Fatalf("env: exit %d %s\n%s", code, errs, out)
	}
	if _, err := os.Stat(filepath.Join(fromEnv, mitm.CAKeyFileName)); err != nil {
		t.Fatalf("CA not created in ROBOTSGATE_DATA_DIR: %v", err)
	}
}

func TestCACommandErrors(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCATest(t, nil, "-no-such-flag"); code != 2 || !strings.Contains(errs, "no-such-flag") {
		t.Fatalf("bad flag: exit %d %q", code, errs)
	}
	// A custom CA whose key does not match: a clear error, exit 1.
	a := filepath.Join(dir, "a")
	b := filepath.Join(dir, "b")
	_, ia, err := mitm.LoadOrCreateCA(a, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ib, err := mitm.LoadOrCreateCA(b, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCATest(t, nil, "-ca-cert", ia.CertFile, "-ca-key", ib.KeyFile)
	if code != 1 || !strings.Contains(errs, "does not match") {
		t.Fatalf("mismatched custom CA: exit %d %q", code, errs)
	}
	// -h prints the usage.
	if code, out, _ := runCATest(t, nil, "-h"); code != 0 || !strings.Contains(out, "robotsgate ca [-pem]") {
		t.Fatalf("-h: exit %d %q", code, out)
	}
}

// TestCAProxyAddr: the HTTPS_PROXY line `robotsgate ca` prints is usable
// when listen names no host or an unspecified one.
func TestCAProxyAddr(t *testing.T) {
	for listen, want := range map[string]string{
		":9309":          "HTTPS_PROXY=http://127.0.0.1:9309 ",
		"0.0.0.0:9309":   "HTTPS_PROXY=http://127.0.0.1:9309 ",
		"[::]:9309":      "HTTPS_PROXY=http://127.0.0.1:9309 ",
		"10.1.2.3:9309":  "HTTPS_PROXY=http://10.1.2.3:9309 ",
		"localhost:8080": "HTTPS_PROXY=http://localhost:8080 ",
	} {
		env := map[string]string{
			"ROBOTSGATE_LISTEN":      listen,
			"ROBOTSGATE_ALLOW_OPEN":  "true",
			"ROBOTSGATE_ADMIN_TOKEN": "t",
			"ROBOTSGATE_DATA_DIR":    filepath.Join(t.TempDir(), "data"),
		}
		code, out, errs := runCATest(t, env)
		if code != 0 {
			t.Fatalf("listen %s: exit %d: %s", listen, code, errs)
		}
		if !strings.Contains(out, want) {
			t.Errorf("listen %s: output lacks %q:\n%s", listen, want, out)
		}
	}
}

// TestCAProxyAdviceBothCases: the proxy advice sets the lower-case
// variables (curl and wget read only those for http:// URLs) and the
// upper-case ones, each on its own export line.
func TestCAProxyAdviceBothCases(t *testing.T) {
	code, out, errs := runCATest(t, nil, "-data-dir", filepath.Join(t.TempDir(), "data"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"  export https_proxy=http://127.0.0.1:9309 http_proxy=http://127.0.0.1:9309\n",
		"  export HTTPS_PROXY=http://127.0.0.1:9309 HTTP_PROXY=http://127.0.0.1:9309\n",
		"--proxy-server=http://127.0.0.1:9309",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestCASPKIHash: `robotsgate ca` prints the base64 SHA-256 of the CA's
// SubjectPublicKeyInfo (Chromium's --ignore-certificate-errors-spki-list),
// computed here from the -pem certificate.
func TestCASPKIHash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	code, out, errs := runCATest(t, nil, "-data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, pemOut, _ := runCATest(t, nil, "-pem", "-data-dir", dir)
	b, _ := pem.Decode([]byte(pemOut))
	if b == nil {
		t.Fatalf("-pem printed no certificate: %q", pemOut)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	want := base64.StdEncoding.EncodeToString(sum[:])
	for _, line := range []string{"  spki:     " + want + " ", "--ignore-certificate-errors-spki-list=" + want + " "} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}
