package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/proxy/signing"
)

// TestAuditVerifyServe runs a real robotsgate whose audit digests are
// signed with audit_key, gets requests refused, stops it, and checks its
// audit log with "robotsgate audit -verify": OK with the key (given, or
// from the configuration), TAMPERED once a byte of a record is changed
// or when checked with another key, and usage errors.
func TestAuditVerifyServe(t *testing.T) {
	dir := t.TempDir()
	key, other := filepath.Join(dir, "audit-key.pem"), filepath.Join(dir, "other.pem")
	k, err := signing.GenerateKey(key, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.GenerateKey(other, rand.Reader); err != nil {
		t.Fatal(err)
	}
	o, _ := newTestOrigin(t, nil)
	path := filepath.Join(dir, "audit.log")
	r := startServe(t, []string{"-audit-log", path, "-audit-key", key, "-agent", "AuditBot"}, nil)
	r.getAll(t, o.URL+"/private/1", o.URL+"/private/2", o.URL+"/public")
	if code := r.stop(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, r.stderr)
	}
	cfgFile := filepath.Join(dir, "robotsgate.yaml")
	if err := os.WriteFile(cfgFile, []byte("audit_log: "+path+"\naudit_key: "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, wantCode int, want string, args ...string) {
		t.Helper()
		code, out, errOut := runAuditTest(t, nil, args...)
		if code != wantCode || !strings.Contains(out+errOut, want) {
			t.Fatalf("audit %v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", args, code, wantCode, want, out, errOut)
		}
	}
	t.Run("untouched, key given", func(t *testing.T) {
		check(t, 0, "signatures that hold: 1 (keys "+k.ID()+")", "-verify", "-verify-key", key, path)
	})
	t.Run("untouched, configured log and key", func(t *testing.T) {
		// two refusals, the volume record flushed at the stop, the digest
		check(t, 0, "OK: 4 chained records (seq 1 to 4)", "-verify", "-config", cfgFile)
	})
	t.Run("another key", func(t *testing.T) {
		check(t, 1, "TAMPERED: "+path+":4: record signature", "-verify", "-verify-key", other, path)
	})
	t.Run("usage error", func(t *testing.T) {
		check(t, 2, "flag provided but not defined", "-verify", "-bogus", path)
	})
	t.Run("missing file", func(t *testing.T) {
		check(t, 2, "no-such", "-verify", filepath.Join(dir, "no-such.log"))
	})
	t.Run("one byte changed", func(t *testing.T) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), "/private/1", "/private/3", 1)), 0o640); err != nil {
			t.Fatal(err)
		}
		check(t, 1, "TAMPERED: "+path+":1: record changed", "-verify", "-verify-key", key, path)
	})
}
