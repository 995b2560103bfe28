package bodyscan

import (
	"net/http"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/robotsgate/robotsgate/robots/robottag"
)

// Which declared character encodings the head scan can read: those whose
// markup is made of the ASCII bytes the scan reads (UTF-8 and the
// ASCII-compatible encodings of the WHATWG Encoding Standard: the 8-bit
// legacy sets, GBK, gb18030, Big5, EUC-JP, EUC-KR, Shift_JIS), and UTF-16,
// which it decodes ([headText]). A client that decodes a page as its
// Content-Type or a meta element declares it (a crawler's HTML library
// often does, browsers or not) would read EBCDIC (ibm037), UTF-7, the
// escape sequences of ISO-2022-JP or an encoding it knows and robotsgate
// does not as markup the scan never sees: such a body is unscannable, as
// UTF-32 is.

// maxLabelDetail bounds how much of an origin's charset label a refusal
// quotes.
const maxLabelDetail = 40

// unreadableCharset returns why a body declared in any of labels cannot
// be scanned, "" when the scan reads every one of them.
func unreadableCharset(labels []string) string {
	for _, l := range labels {
		if !readableCharset(l) {
			if len(l) > maxLabelDetail {
				l = l[:maxLabelDetail] + "..."
			}
			return "body cannot be decoded: charset " + l + ", an encoding robotsgate does not decode"
		}
	}
	return ""
}

// headerCharsets returns the charset labels of h's Content-Type values.
func headerCharsets(h http.Header) []string {
	var labels []string
	for _, v := range h.Values("Content-Type") {
		labels = append(labels, robottag.Charsets(v)...)
	}
	return labels
}

// readableCharset reports whether the scan reads text in the encoding
// label names: a WHATWG label of an ASCII-compatible encoding or of
// UTF-16. An unknown label is not readable: a client may know it.
func readableCharset(label string) bool {
	enc, err := htmlindex.Get(label)
	if err != nil {
		return false
	}
	name, err := htmlindex.Name(enc)
	if err != nil {
		return false
	}
	switch name {
	case "iso-2022-jp", "replacement": // escape sequences; no text at all in a browser
		return false
	}
	return true
}
