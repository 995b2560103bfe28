package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// TestFlagErrorsConsistent: every command refuses what it does not know
// with exit status 2 and one line of robotsgate's own (never Go's default
// "Usage of ..."), and a mistyped flag gets the closest one.
func TestFlagErrorsConsistent(t *testing.T) {
	for args, want := range map[string]string{
		"version -bogus":          `robotsgate version: unexpected argument "-bogus"`,
		"version extra":           `robotsgate version: unexpected argument "extra"`,
		"iptables -bogus":         `robotsgate iptables: flag provided but not defined: -bogus (usage: robotsgate iptables`,
		"iptables -aply":          `(did you mean -apply?)`,
		"-lisen 127.0.0.1:0":      `robotsgate: flags: flag provided but not defined: -lisen (did you mean -listen?)`,
		"serve -audit-lg x":       `(did you mean -audit-log?)`,
		"check -agnet x":          `(did you mean -agent?)`,
		"check -fetch -paralel 2": `(did you mean -parallel?)`,
		"audit -sumary":           `(did you mean -summary?)`,
		"ca -pme":                 `(did you mean -pem?)`,
		"health -admin-listn x":   `(did you mean -admin-listen?)`,
		"reload -admin-tokn x":    `(did you mean -admin-token?)`,
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), strings.Fields(args), testsupport.EnvMap(nil), strings.NewReader(""), &out, &errOut)
		msg := errOut.String()
		if code != 2 || !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "Usage of") {
			t.Errorf("robotsgate %s: exit %d, stderr %q; want 2 and one line containing %q", args, code, msg, want)
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"iptables", "-h"}, testsupport.EnvMap(nil), strings.NewReader(""), &out, &out); code != 0 ||
		!strings.HasPrefix(out.String(), "usage: robotsgate iptables") {
		t.Errorf("iptables -h: exit %d:\n%s", code, out.String())
	}
}

// TestCacheURLErrorNamesNoPackage: a bad cache URL is reported about the
// setting, without a Go package's name.
func TestCacheURLErrorNamesNoPackage(t *testing.T) {
	for _, u := range []string{"redis://[::1", "redis://h:notaport/x", "ftp://h"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"-cache", u}, testsupport.EnvMap(nil), strings.NewReader(""), &out, &errOut)
		msg := errOut.String()
		if code != 2 || !strings.HasPrefix(msg, "robotsgate: config: cache: ") || strings.Contains(msg, "enforce") || strings.Contains(msg, "redisfleet") {
			t.Errorf("-cache %s: exit %d, stderr %q", u, code, msg)
		}
	}
}

// TestCheckMentionsFetch: "check -h" and check's errors name -fetch.
func TestCheckMentionsFetch(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "-h"}, testsupport.EnvMap(nil), strings.NewReader(""), &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "-fetch") || !strings.Contains(out.String(), "check -fetch -h") {
		t.Errorf("check -h: exit %d:\n%s", code, out.String())
	}
	out.Reset()
	code := run(context.Background(), []string{"check", "-agent", "x", "http://example.com/"}, testsupport.EnvMap(nil), strings.NewReader(""), &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "-robots is required, or -fetch") {
		t.Errorf("check without -robots: exit %d, %q", code, errOut.String())
	}
}
