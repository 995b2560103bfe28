package safetext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds every kind of unsafe text: C0 (ESC, CR, LF, TAB, NUL),
// DEL, C1 (CSI U+009B, OSC U+009D), bidi controls and marks, line
// separators, and bytes that are not UTF-8 (a raw 0x9b is CSI on an
// 8-bit terminal).
const hostile = "a\x1b[31mb\r\nc\td\x00e\x7f \u009b31m \u009d0;t\u0007 \u202eevil\u202c \u2066x\u2069 \u200f\u061c \u2028 \x9b\xff ü✓"

func TestEscape(t *testing.T) {
	got := Escape(hostile)
	want := `a\x1b[31mb\r\nc\td\x00e\x7f \u009b31m \u009d0;t\x07 \u202eevil\u202c \u2066x\u2069 \u200f\u061c \u2028 \x9b\xff ü✓`
	if got != want {
		t.Fatalf("Escape:\n got %s\nwant %s", got, want)
	}
	if s := "plain ünïcode ✓ /a\\b"; Escape(s) != s {
		t.Errorf("Escape changed %q", s)
	}
	if got := Replace(hostile, -1); got != "a[31mbcde 31m 0;t evil x    ü✓" {
		t.Errorf("Replace(-1) = %q", got)
	}
	if got := Replace("a\u009bb\x01", '?'); got != "a?b?" {
		t.Errorf("Replace('?') = %q", got)
	}
	if got := EscapeLines("line \u202e1\nline\x1b 2\n"); got != `line \u202e1`+"\n"+`line\x1b 2`+"\n" {
		t.Errorf("EscapeLines = %q", got)
	}
}

// safeBytes reports whether b holds no unsafe rune (line feeds and tabs
// allowed) and is valid UTF-8.
func safeBytes(b []byte) bool {
	for _, r := range strings.ReplaceAll(strings.ReplaceAll(string(b), "\n", ""), "\t", "") {
		if Unsafe(r) {
			return false
		}
	}
	return utf8.Valid(b)
}

func TestJSON(t *testing.T) {
	enc, _ := json.Marshal(map[string]any{"k\u202e": hostile, "n": []string{"\u009b", "ok"}})
	out := JSON(enc)
	if !safeBytes(out) {
		t.Fatalf("unsafe output %q", out)
	}
	var a, b any
	if err := json.Unmarshal(enc, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("output is not JSON: %v %q", err, out)
	}
	if !equalJSON(a, b) {
		t.Fatalf("decoded differently:\n%v\n%v", a, b)
	}
	// A hand-edited line: raw controls inside and outside strings.
	line := []byte("{\"u\":\"a\x1b]0;x\x07\u009b\xff\",\r\"d\":1}\x1b[2J\n")
	if out := JSON(line); !safeBytes(out) || !bytes.HasPrefix(out, []byte(`{"u":"a\u001b]0;x\u0007\u009b\ufffd", "d":1} [2J`)) {
		t.Errorf("hand-edited line: %q", out)
	}
	if plain := []byte(`{"a":"b\"\\c","ü":[1,2]}` + "\n"); &JSON(plain)[0] != &plain[0] {
		t.Error("a safe text was copied")
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// FuzzJSON: JSON of an encoded string decodes to the same string, and
// holds no unsafe rune.
func FuzzJSON(f *testing.F) {
	f.Add(hostile)
	f.Add("\"\\\u009b")
	f.Fuzz(func(t *testing.T, s string) {
		enc, _ := json.Marshal(s)
		out := JSON(enc)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q -> %q: %v", enc, out, err)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("%q decodes to %q", s, got)
		}
		if !safeBytes(out) {
			t.Fatalf("unsafe output %q", out)
		}
		if e := Escape(s); !safeBytes([]byte(e)) || strings.ContainsAny(e, "\n\t") {
			t.Fatalf("Escape(%q) = %q", s, e)
		}
	})
}

// TestEscapeLinesSplitSequence: a byte sequence that a line feed splits
// is checked line by line, as it is escaped: "\xc3\n\xa9" is two
// invalid bytes, not the "é" the two would spell without the line feed.
func TestEscapeLinesSplitSequence(t *testing.T) {
	if got := EscapeLines("a\xc3\n\xa9b"); got != `a\xc3`+"\n"+`\xa9b` {
		t.Errorf("EscapeLines = %q", got)
	}
	if s := "clean\nlines é\n"; EscapeLines(s) != s {
		t.Errorf("EscapeLines changed clean text: %q", EscapeLines(s))
	}
}
