package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

const auditVerifyUsage = "usage: robotsgate audit -verify [-verify-key FILE] [-config FILE] [FILE...]"

// isAuditVerify reports whether the arguments of "robotsgate audit" ask
// for -verify.
func isAuditVerify(args []string) bool {
	for _, a := range args {
		switch {
		case !strings.HasPrefix(a, "-") || a == "-" || a == "--":
			return false
		case a == "-verify" || a == "--verify" || a == "-verify=true" || a == "--verify=true":
			return true
		}
	}
	return false
}

// runAuditVerify implements "robotsgate audit -verify": it checks the
// hash chain and the digest signatures of the audit files (each FILE with
// its rotated siblings, oldest first; no FILE: the configured audit_log's)
// and prints OK, or the first record that was changed, removed,
// reordered or inserted, or the file that was truncated. The signatures
// are checked with -verify-key's keys, else with the configured digest
// key's public half; with neither they are not checked. Exit status: 0
// OK, 1 tampered (or a file that cannot be read whole), 2 usage error.
func runAuditVerify(args []string, env func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit -verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("verify", true, "check the audit log's hash chain and digest signatures")
	keyFile := fs.String("verify-key", "", "Ed25519 key `file` the digests are checked with: a public or private key (PEM or JWK), or a key directory (JWK Set); default: audit_key's, else signing.key's")
	cfgFile := fs.String("config", "", "configuration `file` whose audit_log (and digest key) is used when no FILE (no -verify-key) is given")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, auditVerifyUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return auditFail(stderr, 2, "%v (%s)", config.FlagHint(fs, err), auditVerifyUsage)
	}
	files, keyPath, err := verifyInputs(fs.Args(), *keyFile, *cfgFile, env)
	if err != nil {
		return auditFail(stderr, 2, "%v", err)
	}
	var keys map[string]ed25519.PublicKey
	if keyPath != "" {
		if keys, err = loadVerifyKeys(keyPath); err != nil {
			return auditFail(stderr, 2, "-verify-key: %v", err)
		}
	}
	rep, err := audit.Verify(files, keys)
	if err != nil {
		return auditFail(stderr, 1, "cannot verify: %v", err)
	}
	printVerifyReport(stdout, rep, len(files))
	if rep.Problem != nil {
		return 1
	}
	return 0
}

// verifyInputs returns the files to verify and the key file to check
// signatures with ("" for none).
func verifyInputs(names []string, keyFile, cfgFile string, env func(string) string) ([]string, string, error) {
	var cfg config.Config
	if len(names) == 0 || keyFile == "" {
		var args []string
		if cfgFile != "" {
			args = []string{"-config", cfgFile}
		}
		var err error
		if cfg, err = config.Load(args, env); err != nil {
			return nil, "", err
		}
	}
	if keyFile == "" {
		keyFile = auditKeyFile(cfg)
	}
	if len(names) == 0 {
		if cfg.AuditLog == "-" {
			return nil, "", fmt.Errorf("no FILE given, and audit_log is standard output: name the audit file (%s)", auditVerifyUsage)
		}
		names = []string{cfg.AuditLog}
	}
	var files []string
	for _, n := range names {
		if strings.HasPrefix(n, "-") {
			return nil, "", fmt.Errorf("flags must precede files, and -verify reads no standard input: %q (%s)", n, auditVerifyUsage)
		}
		fs, err := query.Files(n)
		if err != nil {
			return nil, "", err
		}
		for _, f := range fs {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files, keyFile, nil
}

// auditKeyFile is the file of the key that signs the audit digests:
// audit_key, else signing.key; "" when neither is set.
func auditKeyFile(cfg config.Config) string {
	if cfg.AuditKey != "" {
		return cfg.AuditKey
	}
	return cfg.Signing.Key
}

// loadVerifyKeys reads the public keys of path: one key (public or
// private, PEM or JWK), or a key directory (a JWK Set), by keyid.
func loadVerifyKeys(path string) (map[string]ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) && json.Unmarshal(b, &set) == nil && len(set.Keys) > 0 {
		keys := make(map[string]ed25519.PublicKey)
		for i, raw := range set.Keys {
			k, err := signing.ParseKey(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: key %d of the directory: %w", path, i, err)
			}
			keys[k.ID()] = k.Public()
		}
		return keys, nil
	}
	k, err := signing.LoadPublishedKey(path)
	if err != nil {
		return nil, err
	}
	return map[string]ed25519.PublicKey{k.ID(): k.Public()}, nil
}

// printVerifyReport prints what Verify found: OK and the counts, or
// TAMPERED and the first problem.
func printVerifyReport(w io.Writer, rep *audit.Report, files int) {
	if p := rep.Problem; p != nil {
		fmt.Fprintf(w, "TAMPERED: %s\n", p)
	} else {
		fmt.Fprintf(w, "OK: %d chained records (seq %d to %d) in %d file(s)\n", rep.Records, rep.FirstSeq, rep.LastSeq, files)
	}
	sigs := fmt.Sprintf("digests: %d; signatures that hold: %d", rep.Digests, rep.Signed)
	if len(rep.KeyIDs) > 0 {
		sigs += " (keys " + strings.Join(rep.KeyIDs, ", ") + ")"
	}
	if rep.Unsigned > 0 {
		sigs += fmt.Sprintf("; unsigned: %d", rep.Unsigned)
	}
	if rep.Unchecked > 0 {
		sigs += fmt.Sprintf("; not checked (no key: -verify-key): %d", rep.Unchecked)
	}
	fmt.Fprintln(w, sigs)
	if rep.Unchained > 0 {
		fmt.Fprintf(w, "unchained: %d record(s) written before the chain began (no seq, no prev): not verifiable\n", rep.Unchained)
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "skipped: %d line(s) that are no record (fragments of writes that failed; the chain links over them): %s\n",
			len(rep.Skipped), strings.Join(rep.Skipped, ", "))
	}
	if len(rep.Restarts) > 0 {
		fmt.Fprintf(w, "new chain: robotsgate began a chain afresh at %s (it could not read the log's last record: stdout, or a log moved away)\n",
			strings.Join(rep.Restarts, ", "))
	}
}

// enableDigests makes au write digest records as cfg says, signed with
// the digest key when one is configured; it warns when none is.
func enableDigests(au *audit.Auditor, cfg config.Config, log zerolog.Logger) error {
	d := audit.Digests{Every: cfg.AuditDigestInterval}
	if path := auditKeyFile(cfg); path != "" {
		k, err := signing.LoadKey(path)
		if err != nil {
			key := "audit_key"
			if cfg.AuditKey == "" {
				key = "signing.key"
			}
			return fmt.Errorf("%s (audit digests): %w", key, err)
		}
		d.Signer = k
	} else {
		log.Warn().Msg("audit digests are unsigned: set audit_key (or signing.key) so that robotsgate audit -verify can tell a rewritten audit log (see docs/audit.md)")
	}
	au.EnableDigests(d)
	return nil
}
