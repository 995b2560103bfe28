package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestSigningGenerateAndDirectory: "signing generate" writes a 0600 key
// and never overwrites one; "signing directory" prints the JWK Set of
// signing.key and signing.publish, read as serve reads its configuration.
func TestSigningGenerateAndDirectory(t *testing.T) {
	dir := t.TempDir()
	key, next := filepath.Join(dir, "wba.pem"), filepath.Join(dir, "next.pem")
	var out, errb bytes.Buffer
	for _, f := range []string{key, next} {
		out.Reset()
		if code := run(stopped(), []string{"signing", "generate", f}, testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
			t.Fatalf("generate: exit %d: %s", code, errb.String())
		}
		testsupport.AssertMode(t, f, 0o600)
	}
	keyid := strings.TrimSpace(out.String()[strings.LastIndex(out.String(), "keyid ")+len("keyid "):])
	if code := run(stopped(), []string{"signing", "generate", key}, testsupport.EnvMap(nil), nil, &out, &errb); code != 1 {
		t.Errorf("generate over an existing file: exit %d", code)
	}
	out.Reset()
	env := testsupport.EnvMap(map[string]string{"ROBOTSGATE_SIGNING_KEY": key})
	code := run(stopped(), []string{"signing", "directory", "-signature-agent", "https://crawler.example/d"}, env, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("directory: exit %d: %s", code, errb.String())
	}
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal(out.Bytes(), &set); err != nil || len(set.Keys) != 1 || set.Keys[0]["kty"] != "OKP" || set.Keys[0]["d"] != "" {
		t.Fatalf("directory %s: %v", out.String(), err)
	}
	out.Reset()
	code = run(stopped(), []string{"signing", "directory", "-signature-agent", "https://crawler.example/d"},
		testsupport.EnvMap(map[string]string{"ROBOTSGATE_SIGNING_KEY": next, "ROBOTSGATE_CONFIG": testsupport.WriteFile(t, "c.yaml", "signing:\n  publish: ["+key+"]\n")}), nil, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), `"kid":"`+keyid+`"`) || strings.Count(out.String(), `"kid"`) != 2 {
		t.Errorf("directory with signing.publish: exit %d, %s (want the published key %s too)", code, out.String(), keyid)
	}
	errb.Reset()
	if code := run(stopped(), []string{"signing", "directory"}, testsupport.EnvMap(nil), nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "signing.key is not set") {
		t.Errorf("directory without a key: exit %d, %q", code, errb.String())
	}
}

// TestSigningDirectoryWithoutAgent: the directory holds public keys
// only, so "signing directory -signing-key k.pem" runs without
// -signature-agent and prints the same keys as with it; serve still
// needs the agent.
func TestSigningDirectoryWithoutAgent(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k.pem")
	var out, errb bytes.Buffer
	if code := run(stopped(), []string{"signing", "generate", key}, testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errb.String())
	}
	dirOf := func(args ...string) string {
		t.Helper()
		out.Reset()
		errb.Reset()
		if code := run(stopped(), append([]string{"signing", "directory", "-signing-key", key}, args...), testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
			t.Fatalf("signing directory %q: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	without, with := dirOf(), dirOf("-signature-agent", "https://crawler.example/d")
	if without != with || !strings.Contains(without, `"kty":"OKP"`) {
		t.Fatalf("without -signature-agent: %s; with: %s", without, with)
	}
	errb.Reset()
	code := runServe(stopped(), []string{"-listen", "127.0.0.1:0", "-audit-log", "-", "-data-dir", t.TempDir(), "-signing-key", key},
		testsupport.EnvMap(nil), &out, &errb, nil)
	if code != 2 || !strings.Contains(errb.String(), "signing.agent: empty") {
		t.Fatalf("serve without -signature-agent: exit %d, %q", code, errb.String())
	}
}

// TestServeRefusesReadableSigningKey: serve refuses a signing key
// readable by others, naming the setting, the file and the fix.
func TestServeRefusesReadableSigningKey(t *testing.T) {
	key := filepath.Join(t.TempDir(), "wba.pem")
	var out, errb bytes.Buffer
	if code := run(stopped(), []string{"signing", "generate", key}, testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if err := os.Chmod(key, 0o640); err != nil {
		t.Fatal(err)
	}
	args := []string{"-listen", "127.0.0.1:0", "-data-dir", t.TempDir(), "-signing-key", key, "-signature-agent", "https://crawler.example/d"}
	code := runServe(stopped(), args, testsupport.EnvMap(nil), &out, &errb, nil)
	if line := errb.String(); code == 0 || !strings.Contains(line, "signing.key: "+key+": holds a private key but its mode is 0640") || !strings.Contains(line, "chmod 600") {
		t.Errorf("exit %d, stderr %q", code, line)
	}
}

// TestCheckFetchSigns: "check -fetch" signs its robots.txt fetches with
// signing.key, as serve does, so that an origin that admits only signed
// crawlers answers it as it answers serve.
func TestCheckFetchSigns(t *testing.T) {
	key := filepath.Join(t.TempDir(), "wba.pem")
	var out, errb bytes.Buffer
	if code := run(stopped(), []string{"signing", "generate", key}, testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	keyid := strings.TrimSpace(out.String()[strings.LastIndex(out.String(), "keyid ")+len("keyid "):])
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Signature-Input"), `keyid="`+keyid+`"`) || r.Header.Get("Signature-Agent") == "" {
			http.Error(w, "unsigned", http.StatusServiceUnavailable) // robots-unreachable
			return
		}
		io.WriteString(w, "User-agent: *\nDisallow: /private\n")
	}))
	defer o.Close()
	env := map[string]string{"ROBOTSGATE_SIGNING_KEY": key, "ROBOTSGATE_SIGNATURE_AGENT": "https://crawler.example/d"}
	code, stdout, errOut := runCheckFetchTest(t, env, o.URL+"/private\n", "-agent", "FetchBot")
	if code != 1 || !strings.HasPrefix(stdout, "disallowed ") {
		t.Errorf("exit %d, %q, %s: want the signed fetch's robots.txt to decide", code, stdout, errOut)
	}
}
