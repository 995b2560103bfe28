// Package bodyscan reads what a forwarded response's body says of keeping it:
// its robot tags (X-Robots-Tag headers, meta elements in its HTML head),
// decoded as a client would decode them, without buffering the body.
package bodyscan

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/robotsgate/robotsgate/robots/robottag"
)

// Which bodies the head scan reads, and how it turns their bytes into the
// text an HTML parser would see: a client does not care what a
// Content-Type says before it parses a page, so the scan reads what a
// browser would render as HTML, in the encoding a browser would decode.

// docKind is what a response's Content-Type says of scanning its body.
type docKind int

const (
	docOther docKind = iota // a type the scan leaves alone (image/png, text/plain, ...)
	docHTML                 // text/html or application/xhtml+xml
	docSniff                // no Content-Type that parses: sniffed as a browser does
)

// Meta names the head scan reads for TDMRep.
const (
	MetaTDMReservation = "tdm-reservation"
	MetaTDMPolicy      = "tdm-policy"
)

// [sniffLen] is how many decoded bytes a body without a usable Content-Type
// is sniffed on ([http.DetectContentType] reads as many); [prescanLen], how
// many bytes the encoding is determined on, as a browser's prescan.
const (
	sniffLen   = 512
	prescanLen = 1024
)

// docKindOf returns what the Content-Type headers of h say of scanning
// the body. Every value and every element of a comma-separated value
// counts (a browser takes the last valid one, other clients the first):
// any HTML type makes the body HTML. A value whose parameters do not
// parse still names its type; when no value names a type, the body is
// sniffed.
func docKindOf(h http.Header) docKind {
	kind := docSniff
	for _, v := range h.Values("Content-Type") {
		for part := range strings.SplitSeq(v, ",") {
			switch typeKind(part) {
			case docHTML:
				return docHTML
			case docOther:
				kind = docOther
			}
		}
	}
	return kind
}

// typeKind is the kind of one media type: [docSniff] when it names no type.
// The types that cannot be HTML are told apart without a parse, which
// allocates, for every forwarded image.
func typeKind(v string) docKind {
	t := strings.TrimSpace(v)
	mt, _, _ := strings.Cut(t, ";")
	mt = strings.TrimSpace(mt)
	if !strings.EqualFold(mt, "text/html") && !strings.EqualFold(mt, "application/xhtml+xml") && isMediaType(mt) {
		return docOther
	}
	mt, _, err := mime.ParseMediaType(t)
	switch {
	case err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) || !strings.Contains(mt, "/"):
		return docSniff
	case mt == "text/html" || mt == "application/xhtml+xml":
		return docHTML
	}
	return docOther
}

// isMediaType reports whether s is "type/subtype" made of token characters.
func isMediaType(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	return ok && isToken(typ) && isToken(sub)
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// scanHead reads the head of a decoded body src into s: in the encoding a
// browser would decode it ([headText]), sniffed first when sniff (a body
// that does not sniff as HTML is left alone), at most maxBytes bytes of
// text. A head the scan cannot read whole (an encoding it does not
// decode, a head that goes on past maxBytes) makes s Incomplete. The
// error is a read error of src. At most maxBytes+1 bytes of src are read.
func scanHead(src io.Reader, s *Tags, maxBytes int, sniff bool) error {
	// One byte past the window tells a head that goes on from one that
	// ends with it.
	window := &io.LimitedReader{R: src, N: int64(maxBytes) + 1}
	text, why := headText(window)
	if why == "" && sniff {
		tb := bufio.NewReaderSize(text, sniffLen)
		p, _ := tb.Peek(sniffLen)
		if !strings.HasPrefix(http.DetectContentType(p), "text/html") {
			return nil
		}
		text = tb
	}
	if why != "" {
		s.Incomplete, s.NotScanned = true, why
		return nil
	}
	h, err := robottag.ParseHead(text, MetaTDMReservation, MetaTDMPolicy)
	s.Meta, s.Named = h.Robots, h.Named
	if why := unreadableCharset(h.Charsets); why != "" { // charset.go
		s.Incomplete, s.NotScanned = true, why
	} else if err == nil && !h.Ended && window.N == 0 {
		s.Incomplete = true
		s.NotScanned = "the head goes on past robot_tags.max_scan_bytes (" + strconv.Itoa(maxBytes) + " bytes)"
	}
	return err
}

// headText is src as the text an HTML parser reads, or why it cannot
// be. Of the encodings a browser knows, only UTF-16 does not show markup
// as ASCII bytes; it is decoded when a byte order mark says so, or, with
// none, when the first bytes hold the NUL bytes of UTF-16 text, in the
// byte order where they stand ([utf16Of]), whatever the charset of the
// Content-Type says: a client that reads the label, or one that detects
// the encoding, sees the same markup. Every other body is read as it is
// (a UTF-8 byte order mark skipped). UTF-32, and NUL bytes left in the
// first text, cannot be read.
func headText(src io.Reader) (io.Reader, string) {
	br := bufio.NewReaderSize(src, prescanLen)
	peek, _ := br.Peek(prescanLen)
	if bytes.HasPrefix(peek, []byte("\xff\xfe\x00\x00")) || bytes.HasPrefix(peek, []byte("\x00\x00\xfe\xff")) {
		return nil, "body cannot be decoded: UTF-32 (byte order mark), an encoding robotsgate does not decode"
	}
	var text io.Reader = br
	first := peek
	if enc := utf16Of(peek); enc != nil {
		text = transform.NewReader(br, unicode.BOMOverride(enc.NewDecoder()))
		first, _, _ = transform.Bytes(unicode.BOMOverride(enc.NewDecoder()), peek[:len(peek)&^1])
	} else if bytes.HasPrefix(peek, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3) // a UTF-8 byte order mark is no text of the head
		first = peek[3:]
	}
	if bytes.IndexByte(first, 0) >= 0 {
		return nil, "body cannot be decoded: NUL bytes in its first text (UTF-32, or another encoding robotsgate does not decode)"
	}
	return text, ""
}

// utf16Of returns the UTF-16 encoding of a body that begins with peek:
// the one its byte order mark names, else, when NUL bytes make up at
// least a quarter of the bytes at even or at odd offsets (as the high
// bytes of the ASCII characters of markup do), big endian when more of
// them stand at even offsets and little endian otherwise; nil for any
// other body.
func utf16Of(peek []byte) encoding.Encoding {
	switch {
	case bytes.HasPrefix(peek, []byte("\xfe\xff")):
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case bytes.HasPrefix(peek, []byte("\xff\xfe")):
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	}
	var even, odd int
	for i, c := range peek {
		if c == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	switch {
	case 8*max(even, odd) < len(peek): // a stray NUL is no UTF-16 (and is refused as it is)
		return nil
	case even > odd:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	}
	return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
}
