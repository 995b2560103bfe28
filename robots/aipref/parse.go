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
// left out, an element without '=', and any value other than yes/no
// (quoted, "y", empty, with parameters) give no preference; other names
// are ignored. A signal given several times counts with its last value,
// as in the vocabulary's Dictionary.
//
// The content-use key "use" takes "immediate", "reference" or "full"
// (compared likewise); given several times, the most restrictive valid
// value counts (it is a ceiling), and any other value is ignored.
func ParseContentSignal(s string) Prefs {
	var ps Prefs
	for s != "" {
		var item string
		item, s, _ = strings.Cut(s, ",")
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		var p Purpose
		switch k = trimWS(k); {
		case foldEq(k, "use"):
			ps.use = CombineUse(ps.use, signalUse(trimWS(v)))
			continue
		case foldEq(k, "ai-train"):
			p = TrainAI
		case foldEq(k, "search"):
			p = Search
		case foldEq(k, "ai-input"):
			p = AIInput
		default:
			continue
		}
		switch v = trimWS(v); {
		case foldEq(v, "yes"):
			ps.v[p] = Allowed
		case foldEq(v, "no"):
			ps.v[p] = Disallowed
		default:
			ps.v[p] = Unknown
		}
	}
	return ps
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
