package aipref

import (
	"strings"

	"github.com/dunglas/httpsfv"
)

// Parse processes a statement of preference written in the vocabulary's
// serialisation, an RFC 9651 Dictionary such as "train-ai=n, search=y",
// with the vocabulary draft's processing algorithm: for each category
// ("train-ai", "ai-use", "search") the value of its key, parameters disregarded, is
// allowed for the Token y, disallowed for the Token n, and unknown for
// anything else (an absent key, a value that is not a Token, another
// Token, an Inner List). A key given several times counts with its last
// value; other keys and all parameters are ignored. A string that does
// not parse as a Dictionary, upper-case keys included, gives every
// category unknown. AIInput is always unknown: the vocabulary defines no
// such category. A statement written for revision 07 of the vocabulary
// (which lacks "ai-use") parses as it did under 07.
func Parse(s string) Prefs { return ParseHeader([]string{s}) }

// ParseHeader is Parse for the field lines of an HTTP Content-Usage
// header (http.Header.Values("Content-Usage")): the lines are combined as
// RFC 9651 §4.2 says, joined by ", ", and parsed as one Dictionary. No
// lines at all mean no statement: every category unknown.
func ParseHeader(values []string) Prefs {
	if len(values) == 0 {
		return Prefs{}
	}
	d, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return Prefs{}
	}
	var ps Prefs
	ps.v[TrainAI] = dictPref(d, "train-ai")
	ps.v[Search] = dictPref(d, "search")
	ps.v[AIUse] = dictPref(d, "ai-use")
	return ps
}

// dictPref returns the preference the Dictionary d assigns to key.
func dictPref(d *httpsfv.Dictionary, key string) Pref {
	m, ok := d.Get(key)
	if !ok {
		return Unknown
	}
	item, ok := m.(httpsfv.Item)
	if !ok {
		return Unknown
	}
	switch tok, _ := item.Value.(httpsfv.Token); tok {
	case "y":
		return Allowed
	case "n":
		return Disallowed
	}
	return Unknown
}

// ParseContentSignal parses the value of a Content Signals statement,
// "search=yes, ai-input=yes, ai-train=no", mapping its signals onto the
// purposes: "ai-train" to [TrainAI] (the vocabulary's "train-ai"), "search"
// to Search and "ai-input" to AIInput; "yes" is allowed, "no" disallowed.
//
// Content Signals define no grammar beyond their examples, so the parse is
// lenient where leniency cannot invent a permission: elements are
// separated by ',', a signal and its value by the first '=', white space
// (SP, HTAB) around each is ignored, and names and values are compared
// ASCII case-insensitively ("AI-Train = No" disallows training). A signal
// left out gives no preference; other names are ignored, and so are empty
// elements. A signal given several times counts with its last value, as
// in the vocabulary's Dictionary.
//
// An element that is not a known signal with the value yes or no (a value
// quoted, "y", empty or with parameters, "ai-train=no;", elements joined by
// ';' or a space, a missing '=') leaves every signal it names, wherever
// in the element, unknown and [Prefs.Unparsed]: the site said something
// about those purposes that cannot be read, which is not silence. Only a
// disallow of the same signal in the same statement outranks it.
//
// The content-use key "use" takes "immediate", "reference" or "full"
// (compared likewise); given several times, the most restrictive valid
// value counts (it is a ceiling), and any other value is ignored.
func ParseContentSignal(s string) Prefs {
	var ps Prefs
	var bad Set
	for s != "" {
		var item string
		item, s, _ = strings.Cut(s, ",")
		if trimWS(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = trimWS(k), trimWS(v)
		p, known := signalPurpose(k)
		switch {
		case ok && foldEq(k, "use"):
			u := signalUse(v)
			ps.use = CombineUse(ps.use, u)
			if u == UseUnknown {
				bad |= namedSignals(v)
			}
		case ok && known && foldEq(v, "yes"):
			ps.v[p] = Allowed
		case ok && known && foldEq(v, "no"):
			ps.v[p] = Disallowed
		default:
			bad |= namedSignals(item)
		}
	}
	for p := Purpose(0); p < NumPurposes; p++ {
		if bad.Has(p) && ps.v[p] == Allowed {
			ps.v[p] = Unknown
		}
	}
	ps.unparsed = bad &^ ps.Disallows(bad)
	return ps
}

// signalPurpose returns the purpose of the Content Signals name k (ASCII
// case-insensitive), and whether it is one.
func signalPurpose(k string) (Purpose, bool) {
	for _, sg := range signalNames {
		if foldEq(k, sg.name) {
			return sg.p, true
		}
	}
	return 0, false
}

// signalNames are the Content Signals names of the purposes.
var signalNames = [...]struct {
	name string
	p    Purpose
}{{"ai-train", TrainAI}, {"search", Search}, {"ai-input", AIInput}}

// namedSignals returns the purposes whose Content Signals name s holds as
// a word of its own (ASCII case-insensitive; not inside a longer name
// such as "research" or "ai-training").
func namedSignals(s string) Set {
	var out Set
	for i := 0; i < len(s); i++ {
		if i > 0 && isNameByte(s[i-1]) {
			continue
		}
		for _, sg := range signalNames {
			end := i + len(sg.name)
			if end <= len(s) && foldEq(s[i:end], sg.name) && (end == len(s) || !isNameByte(s[end])) {
				out |= SetOf(sg.p)
			}
		}
	}
	return out
}

// isNameByte reports whether c may be part of a signal name.
func isNameByte(c byte) bool {
	return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// ParseContentSignalHeader parses the field lines of an HTTP
// Content-Signal response header (http.Header.Values("Content-Signal")):
// each line is a statement as [ParseContentSignal] reads it, and the
// statements are combined most restrictively ([Prefs.Combine]), so that a
// signal or level repeated on another line can only restrict. No lines
// at all mean no statement.
func ParseContentSignalHeader(values []string) Prefs {
	var ps Prefs
	for i, v := range values {
		if i == 0 {
			ps = ParseContentSignal(v)
			continue
		}
		ps = ps.Combine(ParseContentSignal(v))
	}
	return ps
}

// signalUse returns the level named v (ASCII case-insensitive), or
// [UseUnknown].
func signalUse(v string) Use {
	for u := UseImmediate; u <= UseFull; u++ {
		if foldEq(v, u.String()) {
			return u
		}
	}
	return UseUnknown
}

// trimWS removes SP and HTAB from both ends of s.
func trimWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// foldEq reports whether s equals lower (lower-case ASCII), ignoring the
// case of ASCII letters only (unlike [strings.EqualFold], which also maps
// "ſ" to "s" and the Kelvin sign to "k").
func foldEq(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
