package main

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// runCA is the ca subcommand: it prints where robotsgate's CA certificate
// is (creating the CA if needed) and how to make clients trust it, or with
// -pem writes the certificate to stdout. It reads the same configuration
// as serve (-config, ROBOTSGATE_* environment, flags such as -data-dir),
// so it shows the CA serve uses.
func runCA(args []string, stdout, stderr io.Writer) int {
	return runCAEnv(args, os.Getenv, stdout, stderr)
}

// runCAEnv is [runCA] with the environment given.
func runCAEnv(args []string, env func(string) string, stdout, stderr io.Writer) int {
	rest, pemOut, err := caFlags(args)
	var cfg config.Config
	if err == nil {
		cfg, err = loadConfig(rest, env)
	}
	if errors.Is(err, flag.ErrHelp) {
		caUsage(stdout)
		return 0
	}
	if err != nil {
		hint := "" // ca's own flag, which serve's flags do not know
		if _, name, ok := strings.Cut(err.Error(), "not defined: -"); ok && !strings.Contains(name, "did you mean") &&
			config.Suggest(strings.TrimPrefix(name, "-"), []string{"pem"}) != "" {
			hint = " (did you mean -pem?)"
		}
		fmt.Fprintf(stderr, "robotsgate ca: %v%s\n", err, hint)
		return 2
	}
	ca, info, err := mitm.LoadOrCreateCA(cfg.HTTPS.DataDir, cfg.HTTPS.CACert, cfg.HTTPS.CAKey, nil)
	if err != nil {
		fmt.Fprintf(stderr, "robotsgate ca: %v\n", err)
		return 1
	}
	if pemOut {
		for _, der := range ca.Certificate {
			if err := pem.Encode(stdout, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
				fmt.Fprintf(stderr, "robotsgate ca: %v\n", err)
				return 1
			}
		}
		return 0
	}
	printCAHelp(stdout, info, spkiHash(ca.Leaf), cfg)
	return 0
}

// caFlags takes -pem out of args (the rest are serve's flags).
func caFlags(args []string) (rest []string, pemOut bool, err error) {
	for _, a := range args {
		switch a {
		case "-pem", "--pem", "-pem=true", "--pem=true":
			pemOut = true
		case "-pem=false", "--pem=false":
			pemOut = false
		case "-h", "-help", "--help":
			return nil, false, flag.ErrHelp
		default:
			rest = append(rest, a)
		}
	}
	return rest, pemOut, nil
}

func caUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: robotsgate ca [-pem] [-data-dir DIR] [-config FILE] [serve flags]

Prints where robotsgate's MITM CA certificate is (creating the CA on first
use, like serve does), its fingerprints (spki: for Chromium's
--ignore-certificate-errors-spki-list), how to make clients trust it and
the proxy variables to set. With -pem, writes the certificate (PEM) to
stdout instead.

The CA is read from the same configuration as serve: https.data_dir
(-data-dir, ROBOTSGATE_DATA_DIR), or https.ca_cert/https.ca_key for a custom
CA, from -config FILE or ROBOTSGATE_CONFIG.
`)
}

// printCAHelp prints the CA's location and how to trust it in common
// clients.
func printCAHelp(w io.Writer, info mitm.CAInfo, spki string, cfg config.Config) {
	state := "existing"
	switch {
	case info.Created:
		state = "created now"
	case !info.Generated:
		state = "custom CA from https.ca_cert"
	}
	f := shellQuote(info.CertFile)
	fmt.Fprintf(w, "robotsgate CA certificate: %s (%s)\n", info.CertFile, state)
	fmt.Fprintf(w, "  subject:  %s\n", info.Subject)
	fmt.Fprintf(w, "  sha256:   %s\n", info.Fingerprint)
	fmt.Fprintf(w, "  spki:     %s   (base64 SHA-256 of the public key)\n", spki)
	fmt.Fprintf(w, "  expires:  %s\n", info.NotAfter.UTC().Format(time.DateOnly))
	if info.Generated {
		fmt.Fprintf(w, "  key:      %s (mode 0600; keep it private: it can sign certificates for any site)\n", info.KeyFile)
	}
	if cfg.HTTPS.Mode == config.HTTPSModeTunnel {
		fmt.Fprintf(w, "\nNote: https.mode is tunnel: robotsgate does not intercept HTTPS and clients need not trust this CA.\n")
	}
	fmt.Fprintf(w, `
In mitm mode robotsgate answers HTTPS requests with certificates signed by
this CA. Make each client trust it:

  curl              curl --cacert %[1]s https://...   (or export CURL_CA_BUNDLE=%[1]s)
  Python requests   export REQUESTS_CA_BUNDLE=%[1]s
  Node.js           export NODE_EXTRA_CA_CERTS=%[1]s
  Go, OpenSSL       export SSL_CERT_FILE=%[1]s
  Java              keytool -importcert -noprompt -cacerts -storepass changeit -alias robotsgate -file %[1]s
  Debian/Ubuntu     sudo cp %[1]s /usr/local/share/ca-certificates/robotsgate.crt && sudo update-ca-certificates
  Chromium          chromium --ignore-certificate-errors-spki-list=%[3]s ...
                    (or certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n robotsgate -i %[1]s)

REQUESTS_CA_BUNDLE, SSL_CERT_FILE and --cacert replace the default roots:
fine while all HTTPS goes through robotsgate (which verifies origins against
the system roots itself). Then point the client at the proxy, in lower and
in upper case: curl and wget ignore upper-case HTTP_PROXY for http:// URLs
(wget ignores HTTPS_PROXY too) and would go straight to the origin:

  export https_proxy=http://%[2]s http_proxy=http://%[2]s
  export HTTPS_PROXY=http://%[2]s HTTP_PROXY=http://%[2]s

Chromium reads neither: --proxy-server=http://%[2]s (and
--proxy-bypass-list='<-loopback>' to proxy loopback addresses too).
`, f, clientProxyAddr(cfg.Listen), spki)
}

// spkiHash returns the base64 SHA-256 of cert's SubjectPublicKeyInfo, the
// form Chromium's --ignore-certificate-errors-spki-list takes.
func spkiHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// clientProxyAddr returns the address a client on this machine uses to
// reach the listen address addr: an empty or unspecified host (":9309",
// "0.0.0.0:9309", "[::]:9309") becomes 127.0.0.1; other addresses are
// returned as they are.
func clientProxyAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
