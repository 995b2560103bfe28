package tdmrep

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/robots"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		loc, path string
		want      bool
	}{
		{"/", "/", true},
		{"/a", "/abc", true},
		{"/a$", "/a", true},
		{"/a$", "/ab", false},
		{"/a/*.jpg", "/a/b/c.jpg", true},
		{"/a/*.jpg", "/a/b/c.jpg?x", true}, // not anchored
		{"/a/*.jpg$", "/a/b/c.jpg?x", false},
		{"/a/*.jpg$", "/a/.jpg", true},
		{"*.pdf", "/x/y.pdf", true},
		{"/*/*/c$", "/a/b/c", true},
		{"/*/*/c$", "/a/c", false},
		{"/a*b*c", "/acb", false},
		{"/a*b*c", "/abbc", true},
		{"", "/anything", true},
		{"/%7Euser/", "/~user/x", true}, // escaped unreserved decoded
		{"/~user/", "/%7euser/x", true}, // also in the URL, any hex case
		{"/a%2Fb", "/a/b", false},       // escaped reserved kept
		{"/a%2fb", "/a%2Fb", true},      // hex case
		{"/path/foo-%24", "/path/foo-$", true},
		{"/path/foo-%2A", "/path/foo-*", true},
		{"/path/foo-%2A", "/path/foo-x", false},
		{"/é", "/%C3%A9", true}, // non-ASCII percent-encoded
		{"/a b", "/a%20b", true},
		{"/A/", "/a/", false},  // case-sensitive
		{"/a$b", "/a$b", true}, // '$' inside a pattern is literal
	} {
		if got := matchPattern(canonicalPattern(tc.loc), canonicalPath(tc.path)); got != tc.want {
			t.Errorf("reference: location %q, path %q: %v, want %v", tc.loc, tc.path, got, tc.want)
		}
		if got := oneRule(tc.loc).Match(tc.path) != nil; got != tc.want {
			t.Errorf("location %q, path %q: %v, want %v", tc.loc, tc.path, got, tc.want)
		}
	}
}

// refMatch is matchPattern as a regular expression, for comparison.
func refMatch(p robots.Segments, s string) bool {
	parts := make([]string, len(p.Segs))
	for i, seg := range p.Segs {
		parts[i] = regexp.QuoteMeta(seg)
	}
	re := "^" + strings.Join(parts, ".*")
	if p.Anchored {
		re += "$"
	}
	return regexp.MustCompile("(?s)" + re).MatchString(s)
}

// oneRule is a file of one rule, location loc.
func oneRule(loc string) *File {
	q, _ := json.Marshal(loc)
	f, err := Parse([]byte(`[{"location":` + string(q) + `,"tdm-reservation":1}]`))
	if err != nil {
		panic(err)
	}
	return f
}

func FuzzMatch(f *testing.F) {
	f.Add("/a/*.jpg$", "/a/b.jpg")
	f.Add("/*a*a*a*a$", "/aaaaaaaaab")
	f.Add("/%24*$", "/$x$")
	f.Fuzz(func(t *testing.T, loc, path string) {
		if len(loc) > 64 || len(path) > 256 {
			return
		}
		p, s := canonicalPattern(loc), canonicalPath(path)
		want := refMatch(p, s)
		if got := matchPattern(p, s); got != want {
			t.Fatalf("location %q path %q: %v, regexp %v", loc, path, got, want)
		}
		if got := oneRule(loc).Match(path) != nil; got != want {
			t.Fatalf("File.Match: location %q path %q: %v, regexp %v", loc, path, got, want)
		}
	})
}

func TestParse(t *testing.T) {
	f, err := Parse([]byte("\xef\xbb\xbf" + `[1, {"tdm-reservation": 1}, {"location": "/a", "tdm-reservation": 1.0, "tdm-policy": 5, "x": 1},
		{"location": "/b", "tdm-reservation": "0"}, {"location": "/c", "tdm-reservation": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rules) != 3 || f.Rules[0].N != 3 || f.Rules[0].Reservation != Reserved || f.Rules[1].Reservation != NotReserved ||
		f.Rules[2].Reservation != Unset || len(f.Problems) != 4 {
		t.Fatalf("%+v", f)
	}
	for _, bad := range []string{`{"location": "/", "tdm-reservation": 1}`, ``, `[`, `<html>`, `null`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	many := "[" + strings.Repeat(`{"location":"/","tdm-reservation":0},`, MaxRules) + `{"location":"/","tdm-reservation":1}]`
	if _, err := Parse([]byte(many)); !errors.Is(err, ErrTooManyRules) {
		t.Fatalf("too many: %v", err)
	}
}

func TestHeaderMetaSupersede(t *testing.T) {
	if v, ok := ParseHeader([]string{" 1 "}, []string{"", " https://p/ , https://q/"}); !ok || !v.Reserved() || v.Policy != "https://p/" {
		t.Fatalf("header: %+v %v", v, ok)
	}
	if _, ok := ParseHeader([]string{"true", "2"}, nil); ok {
		t.Fatal("protocol errors declared something")
	}
	if v, ok := ParseHeader([]string{"0"}, []string{"https://p/"}); !ok || v.Reservation != NotReserved || v.Policy != "" {
		t.Fatalf("0 with a policy: %+v", v)
	}
	file := Verdict{Reservation: Reserved, Policy: "https://file/", Source: SourceFile}
	if v := Supersede(file, Verdict{}, false); v != file {
		t.Fatal("absence reset the file's value")
	}
	hdr, _ := ParseHeader([]string{"0"}, nil)
	if v := Supersede(file, hdr, true); v.Reserved() || v.Source != SourceHeader {
		t.Fatalf("header 0 over file 1: %+v", v)
	}
	meta, ok := ParseMeta("1", true, "")
	if v := Supersede(file, meta, ok); !v.Reserved() || v.Source != SourceMeta || v.Policy != "https://file/" {
		t.Fatalf("meta 1 without a policy: %+v", v)
	}
	if _, ok := ParseMeta("", false, "https://p/"); ok {
		t.Fatal("a policy alone declared a reservation")
	}
}
