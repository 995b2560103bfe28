// Package aipref is the vocabulary of AI usage preferences: what a site
// says its content may be used for, as defined by the IETF AI Preferences
// working group's vocabulary draft (draft-ietf-aipref-vocab), and the
// mapping of Content Signals (contentsignals.org) onto it.
//
// A preference for one purpose is allowed, disallowed or unknown. The
// vocabulary draft (revision 08) defines three categories of use,
// "train-ai" (training a generative AI model), "ai-use" (an asset used as
// input to a generative AI model, not provided directly by the user) and
// "search"; no category inherits from another, and one without a stated
// preference is unknown. Revision 07 had only "train-ai" and "search";
// its statements parse the same. robotsgate knows a fourth purpose,
// "ai-input" (content fed into AI models at answer time), which only
// Content Signals express: the vocabulary's serialisation never assigns
// it (unknown labels are ignored). [Binds] says which stated preferences
// a declared purpose is held to.
//
// Content Signals also state a content-use level ("use=reference"), a
// ceiling on what a crawler may keep and re-share; see [Use].
//
// Statements are parsed once (Parse, [ParseHeader], [ParseContentSignal]) into
// a Prefs value; reading and combining Prefs allocates nothing. The
// package does no I/O, reads no clock and logs nothing.
package aipref

import (
	"fmt"
	"strings"
)

// Pref is a preference for one purpose.
type Pref uint8

// The three preference values of the vocabulary's data model.
const (
	Unknown Pref = iota
	Allowed
	Disallowed
)

// String returns "unknown", "allowed" or "disallowed".
func (p Pref) String() string {
	switch p {
	case Allowed:
		return "allowed"
	case Disallowed:
		return "disallowed"
	}
	return "unknown"
}

// Combine returns the combination of two statements of preference for one
// purpose (vocabulary draft, "Combining Preferences"): disallowed when
// either disallows, else allowed when either allows, else unknown. The
// most restrictive preference wins.
func Combine(a, b Pref) Pref {
	switch {
	case a == Disallowed || b == Disallowed:
		return Disallowed
	case a == Allowed || b == Allowed:
		return Allowed
	}
	return Unknown
}

// Purpose is what a crawler uses content for.
type Purpose uint8

// The purposes robotsgate knows. [TrainAI], Search and AIUse are the
// vocabulary's categories "train-ai", "search" and "ai-use"; AIInput is
// Content Signals' "ai-input".
const (
	TrainAI Purpose = iota
	Search
	AIInput
	AIUse
)

// NumPurposes is the number of purposes; Purpose values are 0 to
// NumPurposes-1.
const NumPurposes = 4

// purposeNames are the names of the purposes, by Purpose.
var purposeNames = [NumPurposes]string{"train-ai", "search", "ai-input", "ai-use"}

// PurposeList is the names of every purpose, as errors list the allowed
// values.
const PurposeList = "train-ai, search, ai-input, ai-use"

// String returns the purpose's name: "train-ai", "search", "ai-input" or
// "ai-use".
func (p Purpose) String() string {
	if int(p) < NumPurposes {
		return purposeNames[p]
	}
	return fmt.Sprintf("purpose(%d)", uint8(p))
}

// Binds returns the purposes whose stated preferences bind a crawler that
// declares p: a crawler is held to every one of them, and the most
// restrictive wins.
//
// The vocabulary's "ai-use" (input to a generative model, not given by
// the user) and Content Signals' "ai-input" (input to AI models for RAG,
// grounding and other real-time use) overlap without being equal: each
// covers uses the other does not. A crawler declaring either is held to
// both. "train-ai" and Content Signals' "ai-train" share the purpose
// [TrainAI] (the vocabulary's narrower definition is included in the
// other's), as "search" shares Search. Search binds only itself: the
// vocabulary's Search category overrides the others for uses that meet
// its conditions, so a crawler declaring search is never held to
// train-ai, ai-use or ai-input.
func Binds(p Purpose) Set {
	switch p {
	case AIUse, AIInput:
		return SetOf(AIUse, AIInput)
	case TrainAI, Search:
		return SetOf(p)
	}
	return 0
}

// Set is a set of purposes.
type Set uint8

// SetOf returns the set of the given purposes.
func SetOf(ps ...Purpose) Set {
	var s Set
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

// Has reports whether s holds p.
func (s Set) Has(p Purpose) bool { return int(p) < NumPurposes && s&(1<<p) != 0 }

// String returns the purposes of s in a comma-separated list, in the
// order [TrainAI], Search, AIInput, AIUse ("" for the empty set).
func (s Set) String() string {
	var b strings.Builder
	for p := Purpose(0); p < NumPurposes; p++ {
		if s.Has(p) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.String())
		}
	}
	return b.String()
}

// Names returns the names of the purposes of s, in the order of String;
// nil for the empty set.
func (s Set) Names() []string {
	var names []string
	for p := Purpose(0); p < NumPurposes; p++ {
		if s.Has(p) {
			names = append(names, p.String())
		}
	}
	return names
}

// ParsePurposes parses purpose names, as given on a command line
// ("train-ai,search") or as a list in a configuration file: each element
// of list is a comma-separated list of names. Names are exact and
// lower-case; white space around them and empty elements are ignored, so
// an empty list is the empty set. Any other name is an error that names
// the allowed values.
func ParsePurposes(list []string) (Set, error) {
	var s Set
	for _, item := range list {
		for _, name := range strings.Split(item, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			p, ok := purposeByName(name)
			if !ok {
				return 0, fmt.Errorf("unknown purpose %q: allowed values are %s", name, PurposeList)
			}
			s |= 1 << p
		}
	}
	return s, nil
}

func purposeByName(name string) (Purpose, bool) {
	for p := Purpose(0); p < NumPurposes; p++ {
		if p.String() == name {
			return p, true
		}
	}
	return 0, false
}

// Prefs assigns a preference to each purpose, and a content-use level.
// The zero value is a statement with every preference unknown.
type Prefs struct {
	v   [NumPurposes]Pref
	use Use
	// unparsed is the purposes the statement names but cannot be read
	// for: unknown, yet stated (see [Prefs.Unparsed]).
	unparsed Set
}

// Unparsed returns the purposes ps names without a preference that can
// be read (a Content Signals element such as "ai-train=no;" or
// `ai-train="no"`): their preference is unknown, but stated, so it must
// not be taken for silence and completed from another statement. A
// purpose ps disallows is never in it.
func (ps Prefs) Unparsed() Set { return ps.unparsed }

// Get returns the preference for p (Unknown for a value out of range).
func (ps Prefs) Get(p Purpose) Pref {
	if int(p) < NumPurposes {
		return ps.v[p]
	}
	return Unknown
}

// With returns ps with the preference for p set to v.
func (ps Prefs) With(p Purpose, v Pref) Prefs {
	if int(p) < NumPurposes {
		ps.v[p] = v
	}
	return ps
}

// Use returns the content-use level of ps ([UseUnknown] when none).
func (ps Prefs) Use() Use { return ps.use }

// WithUse returns ps with the content-use level u.
func (ps Prefs) WithUse(u Use) Prefs {
	ps.use = u
	return ps
}

// Combine combines two statements purpose by purpose with Combine, and
// their content-use levels with [CombineUse].
//
// A purpose either leaves unparsed ([Prefs.Unparsed]) stays unknown and
// unparsed unless the other disallows it: an unreadable statement may
// have meant no, so it outranks an allow.
func (ps Prefs) Combine(o Prefs) Prefs {
	unparsed := ps.unparsed | o.unparsed
	for i := range ps.v {
		ps.v[i] = Combine(ps.v[i], o.v[i])
		if unparsed.Has(Purpose(i)) && ps.v[i] == Allowed {
			ps.v[i] = Unknown
		}
	}
	ps.unparsed = unparsed &^ ps.Disallows(unparsed)
	ps.use = CombineUse(ps.use, o.use)
	return ps
}

// Disallows returns the purposes of s that ps disallows.
func (ps Prefs) Disallows(s Set) Set {
	var out Set
	for p := Purpose(0); p < NumPurposes; p++ {
		if s.Has(p) && ps.v[p] == Disallowed {
			out |= 1 << p
		}
	}
	return out
}

// IsZero reports whether every preference of ps is unknown and none is
// stated ([Prefs.Unparsed]).
func (ps Prefs) IsZero() bool { return ps == Prefs{} }

// String formats the known preferences in the vocabulary's serialisation,
// for example "train-ai=n, search=y" ("" when all are unknown). AIInput
// is written with its Content Signals name, "ai-input"; a known
// content-use level comes last, as Content Signals write it
// ("use=reference").
func (ps Prefs) String() string {
	var b strings.Builder
	for i, v := range ps.v {
		if v == Unknown {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Purpose(i).String())
		if v == Allowed {
			b.WriteString("=y")
		} else {
			b.WriteString("=n")
		}
	}
	if ps.use != UseUnknown {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("use=" + ps.use.String())
	}
	return b.String()
}
