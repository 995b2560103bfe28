package main

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// sigCheck is the Web Bot Auth part of the transparent sidecar test
// (transparent_netns_test.go): robotsgate runs with a signing key, and
// the origins check, with the verifier of internal/testsupport, that
// every allowed request arrives signed, HTTP and HTTPS (MITM) alike, and
// that tunnelled HTTPS arrives unsigned (tunnel mode cannot sign).
type sigCheck struct {
	key  *signing.Key
	file string
	mu   sync.Mutex
	ok   int
	bad  []string
}

// newSigCheck writes a signing key into dir for robotsgate (uid uid).
func newSigCheck(t *testing.T, dir string, uid int) *sigCheck {
	s := &sigCheck{file: filepath.Join(dir, "wba.pem")}
	var err error
	if s.key, err = signing.GenerateKey(s.file, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(s.file, uid, uid); err != nil {
		t.Fatal(err)
	}
	return s
}

// flags are robotsgate's signing flags.
func (s *sigCheck) flags() []string {
	return []string{"-signing-key", s.file, "-signature-agent", "https://crawler.test/.well-known/http-message-signatures-directory"}
}

// check records whether the origin request r is signed as it should be.
func (s *sigCheck) check(r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	var problem string
	switch {
	case strings.Contains(r.URL.Path, "/tunnel-"):
		if r.Header.Get("Signature") != "" {
			problem = "a tunnelled request arrived signed"
		}
	case strings.HasPrefix(r.URL.Path, "/allowed/"):
		if _, err := testsupport.VerifyWebBotAuth(testsupport.SigRequestOf(r, scheme), "", s.key.Public(), time.Now()); err != nil {
			problem = err.Error()
		}
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if problem != "" {
		s.bad = append(s.bad, scheme+"://"+r.Host+r.URL.Path+": "+problem)
	} else {
		s.ok++
	}
}

// want fails t when a request was not signed as it should be, or none
// was checked.
func (s *sigCheck) want(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bad) > 0 || s.ok == 0 {
		t.Errorf("signatures: %d as they should be; wrong: %s", s.ok, strings.Join(s.bad, "; "))
	}
}
