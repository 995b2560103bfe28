package rsl

import (
	"strings"
	"testing"
)

// hostileDoc is a license document of n contents, each a wildcard
// pattern of about 2 KB that a path of 'a's almost matches.
func hostileDoc(n int, unit string) []byte {
	pat := "/" + strings.Repeat(unit, 1900/len(unit)) + "$"
	var sb strings.Builder
	sb.WriteString(`<rsl xmlns="https://rslstandard.org/rsl">`)
	for range n {
		sb.WriteString(`<content url="` + pat + `"><license/></content>`)
	}
	sb.WriteString(`</rsl>`)
	return []byte(sb.String())
}

// BenchmarkDecideHostile decides a 16 KB path (max_url_bytes) against
// hostile documents of up to 500 KB (robots.max_bytes).
func BenchmarkDecideHostile(b *testing.B) {
	path := "/" + strings.Repeat("ab", 8000) + "c"
	for _, unit := range []string{"*a", "*ab", "a*b*"} {
		d, err := Parse(hostileDoc(250, unit))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(unit, func(b *testing.B) {
			for b.Loop() {
				d.Decide("https://example.com", path, UseSearch|UseAITrain)
			}
		})
	}
}

// BenchmarkParseHostile parses a 500 KB hostile document.
func BenchmarkParseHostile(b *testing.B) {
	body := hostileDoc(250, "*a")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
