package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// vocabularyRobots states a usage preference that refuses /test for the
// purpose train-ai, and one for ai-input, so that every usage field is
// filled in.
const vocabularyRobots = "User-agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Signal: ai-input=yes\n"

// flatFields returns the fields of the JSON object b with their JSON
// types: members of nested objects are named parent_child (the audit
// record's robots_status is the answers' robots.status), the members of
// "usage", keyed by purpose, usage_*_child.
func flatFields(t *testing.T, shape string, b []byte) map[string]string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v in %s", shape, err, b)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if prefix == "usage_" {
					k = "*" // a purpose
				}
				walk(prefix+k+"_", c)
			}
			return
		case []any:
			elem := "empty"
			if len(v) > 0 {
				elem = jsonType(v[0])
			}
			out[strings.TrimSuffix(prefix, "_")] = "array of " + elem
			return
		}
		out[strings.TrimSuffix(prefix, "_")] = jsonType(v)
	}
	walk("", m)
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	case []any:
		return "array"
	}
	return "object"
}

// shapeOnly lists the fields that not every shape of a decision carries,
// with the shapes that do. Every other field must be in all of them,
// named and typed alike.
var shapeOnly = map[string][]string{
	// What happened to a proxied request: the audit record, the 403.
	"status": {"audit", "403"},
	// The request itself, and robotsgate's mode: the audit record.
	"time": {"audit"}, "client": {"audit"}, "method": {"audit"}, "mode": {"audit"},
	"listener": {"audit"}, "user": {"audit"},
	// The audit log's hash chain (docs/audit.md).
	"seq": {"audit"}, "prev": {"audit"},
	// The hashes of the documents in force (docs/evidence.md): the record is the evidence.
	"robots_sha256": {"audit"}, "tdmrep_sha256": {"audit"}, "license_sha256": {"audit"},
	// The verdict as a boolean: the answers that are not a refusal.
	"allowed": {"decision", "check", "check-fetch"},
	// Only what robotsgate answers itself.
	"error": {"403"}, "explanation": {"403"},
	// Decided per origin, which offline check has no copy of.
	"decision": {"audit", "403", "decision", "check-fetch"},
	"origin":   {"audit", "403", "decision", "check-fetch"},
	"agent":    {"audit", "403", "decision", "check-fetch"},
	"group":    {"audit", "403", "decision", "check-fetch"},
	// The robots.txt copy used, which offline check has none of.
	"robots_status": {"audit", "403", "decision", "check-fetch"}, "robots_http_status": {"audit", "403", "decision", "check-fetch"},
	"robots_age_s": {"audit", "403", "decision", "check-fetch"},
	"robots_url":   {"403", "decision", "check-fetch"}, "robots_fetched_at": {"403", "decision", "check-fetch"},
}

// TestVocabularyOneForAllShapes compares the field names and JSON types of
// the five shapes of one decision: the audit record, the 403 JSON body,
// GET /v1/decision, check -json and check -fetch -json. A field in two
// shapes has one type; a field not in every shape is listed in shapeOnly
// with the shapes that carry it, so that one concept cannot get two names
// (usage_blocked beside usage_disallowed) or two types (purposes as a
// string beside a list). Each scenario fills in a different part of the
// vocabulary: a purpose refused by Content-Usage, a content use refused by
// Content-Signal use=.
func TestVocabularyOneForAllShapes(t *testing.T) {
	for _, sc := range []struct {
		name, robots string
		declare      []string // flags of serve and both checks
		covers       []string // fields the scenario must show in every shape
	}{
		{"purposes", vocabularyRobots, []string{"-purpose", "train-ai,search"},
			[]string{"purposes", "usage_disallowed", "usage_*_pref", "usage_*_source", "usage_*_rule", "usage_*_line"}},
		{"content use", "User-agent: *\nAllow: /\nContent-Signal: search=yes, use=reference\n", []string{"-content-use", "full", "-purpose", "search"},
			[]string{"content_use", "content_use_disallowed", "site_use_level", "site_use_source", "site_use_rule", "site_use_line"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			fields := compareShapes(t, vocabularyShapes(t, sc.robots, sc.declare))
			for _, f := range sc.covers {
				for shape, fs := range fields {
					if _, ok := fs[f]; !ok {
						t.Errorf("%s lacks %q: the scenario does not cover it", shape, f)
					}
				}
			}
		})
	}
}

// vocabularyShapes gets /test refused for what declare declares, under
// robots, in the five shapes.
func vocabularyShapes(t *testing.T, robots string, declare []string) map[string][]byte {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		io.WriteString(w, "page")
	}))
	defer origin.Close()
	target := origin.URL + "/test"
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	r := startServe(t, append([]string{"-audit-log", auditPath, "-agent", "VocabBot"}, declare...), nil)
	shapes := map[string][]byte{}

	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	shapes["403"], _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%s: %d %s", target, resp.StatusCode, shapes["403"])
	}
	resp, err = http.Get("http://" + r.addr.String() + "/v1/decision?url=" + url.QueryEscape(target))
	if err != nil {
		t.Fatal(err)
	}
	shapes["decision"], _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if code := r.stop(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, r.stderr)
	}
	for _, rec := range readAudit(t, auditPath) {
		if rec["url"] == target {
			shapes["audit"], _ = json.Marshal(rec)
		}
	}
	robotsFile := testsupport.WriteFile(t, "robots.txt", robots)
	for name, args := range map[string][]string{
		"check":       {"check", "-robots", robotsFile},
		"check-fetch": {"check", "-fetch"},
	} {
		args = append(append(args, "-agent", "VocabBot", "-json"), append(declare, target)...)
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, testsupport.EnvMap(nil), strings.NewReader(""), &out, &errOut); code != 1 {
			t.Fatalf("%s: exit %d, want 1 (refused): %s %s", name, code, out.String(), errOut.String())
		}
		shapes[name] = out.Bytes()
	}
	return shapes
}

// compareShapes checks the fields of the shapes against each other and
// against shapeOnly, and returns the fields of each shape.
func compareShapes(t *testing.T, shapes map[string][]byte) map[string]map[string]string {
	t.Helper()
	names := []string{"audit", "403", "decision", "check", "check-fetch"}
	fields := map[string]map[string]string{}
	all := map[string]bool{}
	for _, n := range names {
		if shapes[n] == nil {
			t.Fatalf("no %s shape", n)
		}
		fields[n] = flatFields(t, n, shapes[n])
		for f := range fields[n] {
			all[f] = true
		}
	}
	keys := make([]string, 0, len(all))
	for f := range all {
		keys = append(keys, f)
	}
	sort.Strings(keys)
	for _, f := range keys {
		var have []string
		types := map[string][]string{}
		for _, n := range names {
			if ty, ok := fields[n][f]; ok {
				have = append(have, n)
				types[ty] = append(types[ty], n)
			}
		}
		if len(types) > 1 {
			t.Errorf("field %q has %d types: %v", f, len(types), types)
		}
		want, listed := shapeOnly[f]
		if !listed {
			want = names
		}
		if !slices.Equal(have, want) {
			t.Errorf("field %q is in %v, want %v (one name per concept in every shape; a field some shapes cannot have goes in shapeOnly)", f, have, want)
		}
	}
	if t.Failed() {
		for _, n := range names {
			t.Logf("%s: %s", n, strings.TrimSpace(string(shapes[n])))
		}
	}
	return fields
}
