package aipref

import (
	"strings"
	"testing"
)

func TestCombine(t *testing.T) {
	all := []Pref{Unknown, Allowed, Disallowed}
	for _, a := range all {
		for _, b := range all {
			want := Unknown
			switch {
			case a == Disallowed || b == Disallowed:
				want = Disallowed
			case a == Allowed || b == Allowed:
				want = Allowed
			}
			if got := Combine(a, b); got != want {
				t.Errorf("Combine(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	ps := Parse("train-ai=y, search=n").Combine(ParseContentSignal("ai-train=no, ai-input=yes"))
	if got := ps.String(); got != "train-ai=n, search=n, ai-input=y" {
		t.Errorf("combined = %q", got)
	}
	if got := ps.Disallows(SetOf(TrainAI, AIInput)); got != SetOf(TrainAI) {
		t.Errorf("Disallows = %v", got)
	}
}

func TestParsePurposes(t *testing.T) {
	tests := []struct {
		in      []string
		want    Set
		wantErr string
	}{
		{nil, 0, ""},
		{[]string{""}, 0, ""},
		{[]string{"train-ai"}, SetOf(TrainAI), ""},
		{[]string{"train-ai, search", "ai-input"}, SetOf(TrainAI, Search, AIInput), ""},
		{[]string{" search ,,search"}, SetOf(Search), ""},
		{[]string{"Train-AI"}, 0, `unknown purpose "Train-AI": allowed values are train-ai, search, ai-input`},
		{[]string{"train-ai", "ai-train"}, 0, `unknown purpose "ai-train"`},
		{[]string{"train-genai"}, 0, "allowed values are train-ai, search, ai-input"},
	}
	for _, tt := range tests {
		got, err := ParsePurposes(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParsePurposes(%q): %v", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParsePurposes(%q) error %v, want %q", tt.in, err, tt.wantErr)
		case got != tt.want:
			t.Errorf("ParsePurposes(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if s := SetOf(AIInput, TrainAI).String(); s != "train-ai,ai-input" {
		t.Errorf("Set.String = %q", s)
	}
	if !SetOf(Search).Has(Search) || SetOf(Search).Has(TrainAI) || SetOf(Search).Has(Purpose(9)) {
		t.Error("Set.Has")
	}
	var z Prefs
	if Purpose(9).String() != "purpose(9)" || z.Get(Purpose(9)) != Unknown || !z.With(Purpose(9), Allowed).IsZero() {
		t.Error("out-of-range purpose")
	}
}

// FuzzParse checks that parsing never panics and that no statement sets
// AIInput through the vocabulary's syntax.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"train-ai=y, search=n", `train-ai=y, train-ai, search=n, search="n"`, "train-ai;a=(1 2);b, search=:AAA=:", "ai-train=no, search=yes", "use=full, use=Reference,use=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Parse(s).Get(AIInput) != Unknown {
			t.Fatal("vocabulary statement set ai-input")
		}
		if cs := ParseContentSignal(s); cs.Use() > UseFull || Parse(s).Use() != UseUnknown {
			t.Fatalf("use level out of range, or set by the vocabulary's syntax: %q", s)
		}
		_ = ParseContentSignal(s).String()
	})
}

func TestUseLevels(t *testing.T) {
	for _, name := range []string{"immediate", "reference", "full", ""} {
		u, err := ParseUse(name)
		if err != nil || u.String() != name {
			t.Errorf("ParseUse(%q) = %v, %v", name, u, err)
		}
	}
	for _, bad := range []string{"Full", "partial", " full"} {
		if _, err := ParseUse(bad); err == nil || !strings.Contains(err.Error(), "allowed values are immediate, reference, full") {
			t.Errorf("ParseUse(%q): %v", bad, err)
		}
	}
	if !(UseImmediate < UseReference && UseReference < UseFull) {
		t.Error("levels are not ordered")
	}
	all := []Use{UseUnknown, UseImmediate, UseReference, UseFull}
	for _, a := range all {
		for _, b := range all {
			want := min(a, b)
			if a == UseUnknown {
				want = b
			} else if b == UseUnknown {
				want = a
			}
			if got := CombineUse(a, b); got != want {
				t.Errorf("CombineUse(%v, %v) = %v, want %v", a, b, got, want)
			}
			// A site at level a permits a declared level b.
			if got, want := a.Permits(b), a == UseUnknown || b == UseUnknown || b <= a; got != want {
				t.Errorf("%v.Permits(%v) = %v", a, b, got)
			}
		}
	}
	if s := ParseContentSignal("ai-train=no, use=reference").String(); s != "train-ai=n, use=reference" {
		t.Errorf("String = %q", s)
	}
}

// TestBinds: ai-use and ai-input bind each other; train-ai and search
// only themselves (search overrides the other categories).
func TestBinds(t *testing.T) {
	want := map[Purpose]Set{TrainAI: SetOf(TrainAI), Search: SetOf(Search), AIUse: SetOf(AIUse, AIInput), AIInput: SetOf(AIUse, AIInput)}
	for p := Purpose(0); p < NumPurposes; p++ {
		if got := Binds(p); got != want[p] {
			t.Errorf("Binds(%v) = %v, want %v", p, got, want[p])
		}
	}
	if Binds(Purpose(9)) != 0 {
		t.Error("Binds(out of range)")
	}
	if got := ParseContentSignalHeader([]string{"ai-train=yes, use=full", "ai-train=no, use=reference"}).String(); got != "train-ai=n, use=reference" {
		t.Errorf("header lines = %q", got)
	}
}

// TestContentSignalUnparsed: a Content Signals element that names a
// signal but cannot be read leaves it unknown and stated (Unparsed),
// never silent; a disallow in the same statement outranks it, and
// combining keeps it over an allow.
func TestContentSignalUnparsed(t *testing.T) {
	for in, want := range map[string]Set{
		"ai-train=no;":             SetOf(TrainAI),
		"search=yes;ai-train=no":   SetOf(TrainAI, Search),
		`ai-train="no"`:            SetOf(TrainAI),
		"ai-train":                 SetOf(TrainAI),
		"ai-train=no ai-input=no":  SetOf(TrainAI, AIInput),
		"use=reference;search=no":  SetOf(Search),
		"research=maybe":           0,
		"ai-training=no":           0,
		"search=yes, ai-train=no,": 0,
		"ai-train=no, ai-train=n":  0, // disallowed
	} {
		ps := ParseContentSignal(in)
		if ps.Unparsed() != want {
			t.Errorf("%q: unparsed %v, want %v", in, ps.Unparsed(), want)
		}
		for p := Purpose(0); p < NumPurposes; p++ {
			if want.Has(p) && ps.Get(p) != Unknown {
				t.Errorf("%q: %v is %v, want unknown", in, p, ps.Get(p))
			}
		}
	}
	ps := ParseContentSignalHeader([]string{"ai-train=yes", "ai-train=no;"})
	if ps.Get(TrainAI) != Unknown || !ps.Unparsed().Has(TrainAI) || ps.IsZero() {
		t.Errorf("an allow combined with an unreadable statement: %v, unparsed %v", ps.Get(TrainAI), ps.Unparsed())
	}
	if ps := ParseContentSignalHeader([]string{"ai-train=no", "ai-train=no;"}); ps.Get(TrainAI) != Disallowed || ps.Unparsed() != 0 {
		t.Errorf("a disallow combined with an unreadable statement: %v, unparsed %v", ps.Get(TrainAI), ps.Unparsed())
	}
}
