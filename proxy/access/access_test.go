package access

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

func TestAccessCheck(t *testing.T) {
	a, err := New(Options{AllowCIDRs: cidrs(t, "10.1.0.0/16", "::ffff:192.0.2.0/120", "2001:db8::/32")})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]int{
		"10.1.2.3:5000":       0,
		"10.2.0.1:5000":       http.StatusForbidden,
		"192.0.2.9:1":         0, // the IPv4-mapped CIDR matches plain IPv4
		"[::ffff:10.1.0.1]:1": 0, // and a mapped client matches an IPv4 CIDR
		"[2001:db8::1]:1":     0,
		"[2001:db9::1]:1":     http.StatusForbidden,
		"[fe80::1%eth0]:1":    http.StatusForbidden,
		"not-an-address":      http.StatusForbidden,
		"@/var/run/sock":      http.StatusForbidden,
	} {
		r := httptest.NewRequest("GET", "http://x/", nil)
		r.RemoteAddr = addr
		if got := a.Check(r); got != want {
			t.Errorf("Check from %s = %d, want %d", addr, got, want)
		}
	}

	for _, bad := range []Options{
		{Credentials: []string{"nocolon"}},
		{Credentials: []string{":password"}},
		{CredentialsFile: "/nonexistent/credentials"},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
	// A bad line of a credentials file is named without its content.
	f := filepath.Join(t.TempDir(), "creds")
	os.WriteFile(f, []byte("ok:fine\nsecretwithoutcolon\n"), 0o600)
	_, err = New(Options{CredentialsFile: f})
	if err == nil || !strings.Contains(err.Error(), ":2:") || strings.Contains(err.Error(), "secretwithoutcolon") {
		t.Errorf("bad credentials file: %v", err)
	}
	os.WriteFile(f, []byte("# nothing\n"), 0o600)
	if _, err := New(Options{CredentialsFile: f}); err == nil {
		t.Error("an empty credentials file was accepted (it would silently open the proxy)")
	}
}

// cidrs parses client networks the way the configuration does.
func cidrs(t testing.TB, s ...string) []netip.Prefix {
	t.Helper()
	cfg, err := config.Load([]string{"-allow-cidrs", strings.Join(s, ",")}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Auth.AllowCIDRs
}

// TestCredentialsFileIdentity: identity fields after the credentials;
// a bad field is an error naming the file and line, never the password.
func TestCredentialsFileIdentity(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		f := filepath.Join(dir, "creds")
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := write("# c\nalice:s3cret agent=AliceBot purposes=train-ai,search\nbob:hunter2\tpurposes=none\ncarol:pw\n" +
		"erin:pw content_use=reference purposes=ai-use\n")
	a, err := New(Options{CredentialsFile: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, pass string
		want       Identity
	}{
		{"alice", "s3cret", Identity{User: "alice", Agent: "AliceBot", Purposes: aipref.SetOf(aipref.TrainAI, aipref.Search), HasPurposes: true}},
		{"bob", "hunter2", Identity{User: "bob", HasPurposes: true}},
		{"carol", "pw", Identity{User: "carol"}},
		{"erin", "pw", Identity{User: "erin", Purposes: aipref.SetOf(aipref.AIUse), HasPurposes: true, ContentUse: aipref.UseReference, HasContentUse: true}},
	} {
		var got Identity
		h := a.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, _ = IdentityFrom(r.Context()) }))
		r := httptest.NewRequest("GET", "http://example.com/", nil)
		r.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass)))
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s: identity %+v, want %+v", c.user, got, c.want)
		}
	}
	for _, bad := range []string{
		"dave:s3cret agent=Bad/Bot",
		"dave:s3cret purposes=training",
		"dave:s3cret purposes=",
		"dave:s3cret content_use=Full",
		"dave:s3cret content_use=",
		"dave:s3cret content_use=full content_use=full",
		"dave:my s3cret",
		"dave:s3cret agent=A agent=B",
		"dave:s3cret\ndave:s3cret agent=Other",
	} {
		_, err := New(Options{CredentialsFile: write("# c\n" + bad + "\n")})
		if err == nil {
			t.Errorf("%q: no error", bad)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, f+":") || strings.Contains(msg, "s3cret") {
			t.Errorf("%q: error %q must name the file and line and not the password", bad, msg)
		}
	}
}

func TestCredentialSigningFields(t *testing.T) {
	id := func(line string) (Identity, error) {
		_, got, err := parseCredentialLine(line)
		return got, err
	}
	got, err := id("alice:pw signing_key=/run/secrets/alice.pem signature_agent=https://alice.example/.well-known/http-message-signatures-directory")
	if err != nil || got.SigningKey != "/run/secrets/alice.pem" || got.SignatureAgent != "https://alice.example/.well-known/http-message-signatures-directory" {
		t.Errorf("%+v, %v", got, err)
	}
	for _, bad := range []string{
		"alice:pw signing_key=",
		"alice:pw signature_agent=http://alice.example/",
		"alice:pw signature_agent=https://alice.example/#frag",
		"alice:pw signing_key=a signing_key=b",
	} {
		if _, err := id(bad); err == nil || strings.Contains(err.Error(), "alice.example") {
			t.Errorf("%q: %v (want an error that does not quote the field)", bad, err)
		}
	}
}

// TestCredentialsFileModeRefused: a credentials file that group or others
// can read is refused with the chmod to run; 0600 and 0400 are accepted.
func TestCredentialsFileModeRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not describe Windows ACLs")
	}
	for _, tc := range []struct {
		name string
		mode os.FileMode
		ok   bool
	}{
		{"0600", 0o600, true},
		{"0400", 0o400, true},
		{"0640 group-readable", 0o640, false},
		{"0644 world-readable", 0o644, false},
		{"0604 world-readable only", 0o604, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "creds")
			if err := os.WriteFile(f, []byte("crawler:s3cret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := New(Options{CredentialsFile: f})
			if tc.ok != (err == nil) {
				t.Fatalf("mode %04o: err %v, want ok=%v", tc.mode, err, tc.ok)
			}
			if !tc.ok && (!strings.Contains(err.Error(), "chmod 600 "+f) || strings.Contains(err.Error(), "s3cret")) {
				t.Fatalf("error does not give the chmod (or shows the password): %v", err)
			}
		})
	}
}

func TestCredentialPaymentFields(t *testing.T) {
	_, got, err := parseCredentialLine("alice:pw payment=pay payment_max_price=USD:0.002")
	if err != nil || got.Payment != "pay" || got.PaymentMaxPrice.String() != "USD 0.002" {
		t.Errorf("%+v, %v", got, err)
	}
	for _, bad := range []string{
		"alice:pw payment=paid",
		"alice:pw payment=",
		"alice:pw payment_max_price=USD0.01",
		"alice:pw payment_max_price=USD:-1",
		"alice:pw payment_max_price=0.01",
		"alice:pw payment=pay payment=off",
	} {
		t.Run(bad, func(t *testing.T) {
			if _, _, err := parseCredentialLine(bad); err == nil {
				t.Errorf("%q: no error", bad)
			}
		})
	}
}
