package bodyscan

import (
	"mime"
	"net/http"
	"strings"
)

// Whole representations: what response-side enforcement asks an origin
// for so that the scan reads a whole document, and which responses still
// carry only part of one.

// rangeHeaders are the request headers, as canonical keys, that ask for
// part of a representation: Range, its condition If-Range, and
// Request-Range, the obsolete name some servers still honour.
var rangeHeaders = []string{"Range", "If-Range", "Request-Range"}

// scanAcceptEncoding are the content codings the scan decodes
// ([enforce.DecodeBody]), plus identity.
var scanAcceptEncoding = []string{"gzip", "x-gzip", "deflate", "identity"}

// AskWhole removes from h the [rangeHeaders] and narrows an
// Accept-Encoding the client sent to the codings the scan decodes
// ([narrowAcceptEncoding]); it reports whether a range header was removed.
func AskWhole(h http.Header) (rangeRemoved bool) {
	for _, k := range rangeHeaders {
		if _, ok := h[k]; ok {
			rangeRemoved = true
			delete(h, k)
		}
	}
	narrowAcceptEncoding(h)
	return rangeRemoved
}

// Of is the robot-tag scan the round trip made of resp's body, nil when
// it made none: the body carries it ([Carrier]).
func Of(resp *http.Response) *Tags {
	if c, ok := resp.Body.(Carrier); ok {
		return c.TagScan()
	}
	return nil
}

// Carrier is a response body that carries the robot-tag scan of its
// first bytes.
type Carrier interface{ TagScan() *Tags }

// TagScan is the scan of b's first bytes.
func (b *tagBody) TagScan() *Tags { return b.scan }

// IsPartial reports whether resp carries part of a representation for a
// document the scan reads or whose type is unknown: a 206 of text/html or
// of no (or an unparsable) Content-Type, or any multipart/byteranges
// answer, whose parts the scan does not read.
func IsPartial(resp *http.Response) bool {
	if ct := strings.TrimSpace(resp.Header.Get("Content-Type")); len(ct) >= len("multipart/") &&
		strings.EqualFold(ct[:len("multipart/")], "multipart/") && TypeOf(resp) == "multipart/byteranges" {
		return true
	}
	if resp.StatusCode != http.StatusPartialContent {
		return false
	}
	mt := TypeOf(resp)
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "unknown type"
}

// TypeOf is resp's media type, "unknown type" when it has none or one
// that does not parse.
func TypeOf(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt == "" {
		return "unknown type"
	}
	return mt
}

// narrowAcceptEncoding keeps, of the Accept-Encoding elements in h, those
// naming a coding the scan decodes ([scanAcceptEncoding]), verbatim; when
// none is left it says identity. A request without Accept-Encoding is
// left without: the origin then sends identity.
func narrowAcceptEncoding(h http.Header) {
	vals, ok := h["Accept-Encoding"]
	if !ok {
		return
	}
	var keep []string
	dropped := false
	for _, v := range vals {
		for el := range strings.SplitSeq(v, ",") {
			el = strings.TrimSpace(el)
			if el == "" {
				continue
			}
			coding, _, _ := strings.Cut(el, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if !isScanCoding(coding) {
				dropped = true
				continue
			}
			keep = append(keep, el)
		}
	}
	if !dropped && len(vals) == 1 {
		return
	}
	if len(keep) == 0 {
		keep = []string{"identity"}
	}
	h["Accept-Encoding"] = []string{strings.Join(keep, ", ")}
}

// isScanCoding reports whether coding is one of [scanAcceptEncoding].
func isScanCoding(coding string) bool {
	for _, c := range scanAcceptEncoding {
		if coding == c {
			return true
		}
	}
	return false
}
