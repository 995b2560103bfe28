package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// runSigning is "robotsgate signing": Web Bot Auth keys.
//
//	robotsgate signing generate FILE        write a new Ed25519 key (PEM PKCS#8, mode 0600) and print its keyid
//	robotsgate signing directory [flags]    print the key directory (JWK Set) of signing.key and signing.publish
func runSigning(args []string, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		signingUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "generate":
		if len(args) != 2 || isHelp(args[1]) {
			signingUsage(stderr)
			return 2
		}
		k, err := signing.GenerateKey(args[1], rand.Reader)
		if err != nil {
			return fail(stderr, 1, err)
		}
		fmt.Fprintf(stdout, "wrote %s (Ed25519, mode 0600); keyid %s\n", args[1], k.ID())
		return 0
	case "directory": // public keys only: no Signature-Agent needed
		cfg, err := config.LoadKeys(args[1:], env)
		if errors.Is(err, flag.ErrHelp) {
			signingUsage(stdout)
			return 0
		}
		if err != nil {
			return fail(stderr, 2, err)
		}
		b, err := proxy.SigningDirectory(cfg)
		if err != nil {
			return fail(stderr, 1, err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	fmt.Fprintf(stderr, "robotsgate signing: unknown command %q (want generate or directory)\n", args[0])
	return 2
}

func signingUsage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  robotsgate signing generate FILE       write a new Ed25519 private key to FILE (PEM PKCS#8, mode 0600; never overwrites)
  robotsgate signing directory [flags]   print the key directory (JWK Set) of signing.key and signing.publish,
                                         read as serve reads its configuration (-config, ROBOTSGATE_*, flags)

Publish the directory at https://<crawler's domain>/.well-known/http-message-signatures-directory
with Content-Type application/http-message-signatures-directory+json (see docs/signing.md).
`)
}
