package bodyscan

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// Tags is what one response's robot tags say.
type Tags struct {
	Header []robottag.Directive // from its X-Robots-Tag headers
	Meta   []robottag.Directive // from <meta name="robots|AGENT"> in its HTML head
	// Named is the content of the head's first <meta> of each name the
	// TDMRep step reads (tdm-reservation, tdm-policy), when present.
	Named map[string]string
	// Scanned is the number of body bytes read to look for meta elements.
	Scanned int
	// NotScanned says why an HTML body was not (fully) scanned for meta
	// elements, "" when it was or when the response is not HTML.
	NotScanned string
	// Incomplete says that the scan could not read the whole head: the
	// body's Content-Encoding (br, zstd, a corrupt stream, ...) or its
	// character encoding (UTF-32, ...) is one the scan cannot decode, or
	// the head goes on past max_scan_bytes. A step that may refuse must
	// not pass it on as scanned.
	Incomplete bool
}

// tagBody is a response body whose first bytes were read to scan for
// meta elements: it replays them, then reads on from the origin's body,
// and closes the origin's body. It carries the scan's result, so that a
// later step need not scan again.
type tagBody struct {
	io.Reader
	orig io.ReadCloser
	scan *Tags
}

func (b *tagBody) Close() error { return b.orig.Close() }

// scanRecorder keeps every byte read through it, and the first read
// error other than io.EOF.
type scanRecorder struct {
	r   io.Reader
	buf []byte
	err error
}

func (s *scanRecorder) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.buf = append(s.buf, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// errReader returns err on every Read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// RobotTags returns what resp's robot tags say: its X-Robots-Tag
// headers always, and, for a final ([Applies]) HTML response (text/html,
// application/xhtml+xml, or a body without a usable Content-Type that
// sniffs as HTML: [docKindOf]), the meta elements in the first
// cfg.MaxScanBytes of its text (less when the head ends earlier;
// [scanHead]). The bytes read are not lost: resp.Body is replaced by a
// *[tagBody] that replays them and then streams the rest of the original
// body, which is never buffered; ContentLength and the headers are left
// as they are. A read error during the scan is handed to the client after
// the bytes read before it. Scanning a response twice returns the first
// result.
//
// A body with a Content-Encoding (gzip, x-gzip, deflate, stacked) is
// decoded for the scan only ([scanBody]): the client gets the bytes the
// origin sent. A body the scan cannot decode (br, zstd, a corrupt
// stream, ...) is Undecodable.
func RobotTags(resp *http.Response, cfg config.RobotTagsConfig) *Tags {
	return RobotTagsInto(resp, cfg, nil)
}

// RobotTagsInto is [RobotTags] with the result written to into
// (nil: a new one) unless resp was scanned before.
func RobotTagsInto(resp *http.Response, cfg config.RobotTagsConfig, into *Tags) *Tags {
	if s := Of(resp); s != nil {
		return s
	}
	if into == nil {
		into = new(Tags)
	}
	*into = Tags{Header: robottag.ParseXRobotsTag(resp.Header.Values("X-Robots-Tag"))}
	s := into
	kind := docKindOf(resp.Header)
	if kind == docOther || !hasBody(resp) || !Applies(resp.StatusCode) {
		return s
	}
	if cfg.MaxScanBytes <= 0 {
		s.NotScanned = "robot_tags.max_scan_bytes is 0"
		return s
	}
	scanBody(resp, s, cfg.MaxScanBytes, kind == docSniff)
	return s
}

// scanBody fills in s.Meta from the head in the first maxBytes decoded
// bytes of resp's body ([scanHead]; sniff as [docKindOf] says)
// and replaces resp.Body by a *[tagBody] replaying the bytes read (as the
// origin sent them) before the rest. The coded bytes read are bounded too
// ([enforce.DecodeBody]), so a decompression bomb costs no more memory
// than a plain page.
func scanBody(resp *http.Response, s *Tags, maxBytes int, sniff bool) {
	orig := resp.Body
	rec := &scanRecorder{r: orig}
	src, codings, err := enforce.DecodeBody(resp.Header, rec, maxBytes)
	if err == nil {
		err = scanHead(src, s, maxBytes, sniff) // fails only when reading fails
	}
	s.Scanned = len(rec.buf)
	var rest io.Reader = orig
	switch {
	case rec.err != nil:
		rest = errReader{rec.err}
		s.NotScanned = "reading the body failed: " + rec.err.Error()
		// The client gets the coded bytes read before the error, which
		// the decoder may not have shown the scan in full.
		s.Incomplete = err != nil && len(codings) > 0
	case err != nil:
		s.Incomplete = true
		s.NotScanned = "body cannot be decoded: " + err.Error()
	}
	if why := unreadableCharset(headerCharsets(resp.Header)); why != "" && rec.err == nil && !s.Incomplete {
		s.Incomplete, s.NotScanned = true, why // charset.go
	}
	resp.Body = &tagBody{Reader: io.MultiReader(bytes.NewReader(rec.buf), rest), orig: orig, scan: s}
}

// Applies reports whether the robot tags of a response of status code
// count: those of every final response the crawler receives, not only of
// a 2xx. An error page or a redirect is a document the crawler gets and
// may keep as much as a 200; a 304's X-Robots-Tag updates the headers of
// the cached page it revalidates (RFC 9111 section 4.3.4), so a noindex
// there applies to that page. Only an interim 1xx (101, whose connection
// is relayed) carries none.
func Applies(code int) bool { return code >= http.StatusOK }

// hasBody reports whether resp may have a body to scan.
func hasBody(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength == 0 {
		return false
	}
	if resp.Request != nil && resp.Request.Method == http.MethodHead {
		return false
	}
	return resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified
}
