package aipref

import "fmt"

// Use is a content-use level of Content Signals ("use=immediate",
// "use=reference", "use=full"): how much of the content a crawler may
// keep and re-share after fetching it. Levels are ordered, from least to
// most permissive: [UseImmediate] (interact, store and reuse nothing) <
// [UseReference] (index, excerpt and link back) < [UseFull] (summarise and
// reproduce). A site's level is a ceiling: a crawler whose declared
// level is above it should not proceed. [UseUnknown] states no level.
type Use uint8

// The content-use levels, in increasing order.
const (
	UseUnknown Use = iota
	UseImmediate
	UseReference
	UseFull
)

// UseList is the names of the levels, as errors list the allowed values.
const UseList = "immediate, reference, full"

// String returns "immediate", "reference", "full", or "" for [UseUnknown].
func (u Use) String() string {
	switch u {
	case UseImmediate:
		return "immediate"
	case UseReference:
		return "reference"
	case UseFull:
		return "full"
	case UseUnknown:
		return ""
	}
	return fmt.Sprintf("use(%d)", uint8(u))
}

// ParseUse parses a level name, exact and lower-case; "" is [UseUnknown].
// Any other name is an error that names the allowed values.
func ParseUse(s string) (Use, error) {
	for u := UseImmediate; u <= UseFull; u++ {
		if s == u.String() {
			return u, nil
		}
	}
	if s == "" {
		return UseUnknown, nil
	}
	return UseUnknown, fmt.Errorf("unknown content use %q: allowed values are %s", s, UseList)
}

// CombineUse returns the most restrictive of two stated levels: the lower
// one, a level stated by one only, or [UseUnknown] when neither states one.
func CombineUse(a, b Use) Use {
	switch {
	case a == UseUnknown:
		return b
	case b == UseUnknown || a < b:
		return a
	}
	return b
}

// Permits reports whether a site whose level is u lets a crawler that
// declared the level want proceed: yes when either is [UseUnknown] (no
// ceiling, or no declared use), else when want is not above u.
func (u Use) Permits(want Use) bool {
	return u == UseUnknown || want == UseUnknown || want <= u
}
