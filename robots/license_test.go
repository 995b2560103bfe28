package robots

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestLicenses checks which License lines bind which crawler, with the
// examples of rsl.md.
func TestLicenses(t *testing.T) {
	grouped := `User-agent: ExampleBot
Allow: /
License: https://example.com/examplebot-license.xml

User-agent: *
Allow: /
License: https://example.com/default-license.xml
`
	global := "License: https://a.example/l.xml\n\nUser-agent: Googlebot\nAllow: /\n"
	mixed := "License: https://example.com/global.xml\nUser-agent: A\nLicense: https://example.com/a.xml\nDisallow: /x\nUser-agent: B\nDisallow: /y\n"
	for _, tc := range []struct {
		name, body, agent string
		want              []string
	}{
		{"global", global, "FooBot", []string{"https://a.example/l.xml"}},
		{"group", grouped, "ExampleBot", []string{"https://example.com/examplebot-license.xml"}},
		{"group case-insensitive", grouped, "examplebot", []string{"https://example.com/examplebot-license.xml"}},
		{"default group", grouped, "OtherBot", []string{"https://example.com/default-license.xml"}},
		{"group and global", mixed, "A", []string{"https://example.com/global.xml", "https://example.com/a.xml"}},
		{"no own lines: every line", mixed, "B", []string{"https://example.com/global.xml", "https://example.com/a.xml"}},
		{"no group at all", mixed, "C", []string{"https://example.com/global.xml", "https://example.com/a.xml"}},
		{"relative ignored", "License: /license.xml\nUser-agent: *\nDisallow:\n", "A", nil},
		{"other scheme ignored", "License: ftp://a.example/l.xml\nLicense: https://user:pw@a.example/l\n", "A", nil},
		{"record name case", "LICENSE: https://a.example/l.xml\nlicense: https://a.example/l.xml\n", "A", []string{"https://a.example/l.xml"}},
		{"fragment is a comment", "License: https://a.example/l.xml#x\n", "A", []string{"https://a.example/l.xml"}},
		{"scheme lower-cased", "License: HTTPS://a.example/l.xml\n", "A", []string{"https://a.example/l.xml"}},
		{"not a prefix match", "Licenses: https://a.example/l.xml\nLicense-x: https://b.example/\n", "A", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, complete := Parse([]byte(tc.body)).Licenses(tc.agent)
			if !slices.Equal(got, tc.want) || !complete {
				t.Fatalf("Licenses(%s) = %q, %v; want %q", tc.agent, got, complete, tc.want)
			}
		})
	}
}

// TestLicenseLinesKeepGroups: a License line neither ends a run of
// user-agent lines nor changes a verdict.
func TestLicenseLinesKeepGroups(t *testing.T) {
	with := "User-agent: a\nLicense: https://x.example/l.xml\nUser-agent: b\nDisallow: /\n"
	without := "User-agent: a\nUser-agent: b\nDisallow: /\n"
	for _, agent := range []string{"a", "b", "c"} {
		w, wo := Parse([]byte(with)).MatchPath(agent, "/p"), Parse([]byte(without)).MatchPath(agent, "/p")
		if w.Allowed != wo.Allowed {
			t.Errorf("%s: allowed %v with the License line, %v without", agent, w.Allowed, wo.Allowed)
		}
	}
	r := Parse([]byte(with))
	if got, _ := r.Licenses("b"); len(got) != 1 {
		t.Fatalf("b: %q", got)
	}
	if ext := r.Extensions(); len(ext) != 1 || ext[0].Key != "License" {
		t.Fatalf("extensions %+v", ext)
	}
}

// TestLicensesBounded: a file of many License lines keeps 64 and says it
// is incomplete.
func TestLicensesBounded(t *testing.T) {
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, "License: https://a.example/%d.xml\n", i)
	}
	got, complete := Parse([]byte(sb.String())).Licenses("a")
	if len(got) != maxLicenseLines || complete {
		t.Fatalf("%d licenses, complete %v", len(got), complete)
	}
}
