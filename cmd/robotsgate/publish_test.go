package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy"
)

// publishFixture writes a signing key, a credentials file (a user with a
// product token of its own, a user with a signing identity of its own)
// and a configuration naming them; it returns the configuration file.
func publishFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "wba.pem")
	var out, errb bytes.Buffer
	if code := run(stopped(), []string{"signing", "generate", key}, testsupport.EnvMap(nil), nil, &out, &errb); code != 0 {
		t.Fatalf("generate: %s", errb.String())
	}
	creds := filepath.Join(dir, "creds")
	lines := "alice:pw agent=AliceBot purposes=search\n" +
		"bob:pw agent=BobBot signing_key=" + key + " signature_agent=https://bob.example/keys/directory\n"
	if err := os.WriteFile(creds, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return testsupport.WriteFile(t, "robotsgate.yaml", `agent: ExampleBot
purposes: [train-ai]
signing:
  key: `+key+`
  agent: https://crawler.example/.well-known/http-message-signatures-directory
auth:
  credentials_file: `+creds+`
crawler:
  name: "Example <b>Crawler</b> & Co"
  contact: ops@crawler.example
  url: https://crawler.example/bot
`)
}

// TestPublish: publish writes the crawler page, a Signature Agent Card
// per signing identity and each card's key directory where its jwks_uri
// points: the JSON parses, the directory is the one the admin listener
// serves, the page names every product token and escapes the
// configuration's text.
func TestPublish(t *testing.T) {
	conf := publishFixture(t)
	out := filepath.Join(t.TempDir(), "site")
	var stdout, stderr bytes.Buffer
	if code := run(stopped(), []string{"publish", "-out", out, "-config", conf}, testsupport.EnvMap(nil), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, stderr.String())
	}
	cfg, err := config.Load([]string{"-config", conf}, testsupport.EnvMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	adminDir, err := proxy.SigningDirectory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cards := map[string]string{"signature-agent-card.json": "ExampleBot", "signature-agent-card-bob.json": "BobBot"}
	for name, token := range cards {
		t.Run(name, func(t *testing.T) { checkCard(t, out, name, token, adminDir) })
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>ExampleBot</code>", "<code>AliceBot</code>", "<code>BobBot</code>",
		"Example &lt;b&gt;Crawler&lt;/b&gt; &amp; Co", `href="mailto:ops@crawler.example"`, "User-agent: ExampleBot",
		"https://crawler.example/.well-known/http-message-signatures-directory", "train-ai"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(string(page), "<b>Crawler") {
		t.Error("the page holds the crawler name unescaped")
	}
}

// TestPublishWithoutSigning: without signing.key, publish writes the page
// alone; without -out it is a usage error.
func TestPublishWithoutSigning(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(stopped(), []string{"publish", "-out=" + out, "-agent", "LoneBot"}, testsupport.EnvMap(nil), nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "index.html" {
		t.Errorf("wrote %v, want index.html alone", entries)
	}
	page, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(page), "<code>LoneBot</code>") || !strings.Contains(string(page), "No contact is configured") {
		t.Errorf("page:\n%s", page)
	}
	stderr.Reset()
	if code := run(stopped(), []string{"publish"}, testsupport.EnvMap(nil), nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-out DIR is required") {
		t.Errorf("without -out: exit %d, %q", code, stderr.String())
	}
}

// checkCard checks the Signature Agent Card name under out: its fields,
// and the key directory where its jwks_uri points (for the configured
// identity, the one the admin listener serves: adminDir).
func checkCard(t *testing.T, out, name, token string, adminDir []byte) {
	t.Helper()
	var card map[string]any
	b, err := os.ReadFile(filepath.Join(out, name))
	if err != nil || json.Unmarshal(b, &card) != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if card["rfc9309-product-token"] != token || card["client_name"] != "Example <b>Crawler</b> & Co" ||
		card["client_uri"] != "https://crawler.example/bot" || card["purpose"] == nil {
		t.Errorf("card %s", b)
	}
	if c, _ := card["contacts"].([]any); len(c) != 1 || c[0] != "ops@crawler.example" {
		t.Errorf("contacts %v", card["contacts"])
	}
	jwks, _ := card["jwks_uri"].(string)
	u, err := url.Parse(jwks)
	if err != nil || u.Scheme != "https" {
		t.Fatalf("jwks_uri %q", jwks)
	}
	dir, err := os.ReadFile(filepath.Join(out, u.Host, filepath.FromSlash(u.Path)))
	if err != nil {
		t.Fatalf("no key directory where jwks_uri %s points: %v", jwks, err)
	}
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal(dir, &set); err != nil || len(set.Keys) == 0 || set.Keys[0]["kty"] != "OKP" || set.Keys[0]["d"] != "" {
		t.Errorf("directory %s: %v", dir, err)
	}
	if name == "signature-agent-card.json" && !bytes.Equal(bytes.TrimSpace(dir), adminDir) {
		t.Errorf("directory %s, the admin listener serves %s", dir, adminDir)
	}
}
