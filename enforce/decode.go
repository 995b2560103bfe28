package enforce

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// acceptEncoding is the Accept-Encoding of robots.txt fetches: the
// content codings [DecodeBody] decodes. Setting it on the request also
// keeps net/http's transport from adding gzip and decoding on its own,
// so every body passes through [DecodeBody] and its size limit, whatever
// the transport's DisableCompression says.
const acceptEncoding = "gzip, deflate"

// maxCodings bounds how many content codings a body may be stacked in
// ("gzip, gzip"): each one adds a decoder.
const maxCodings = 4

// errCodedTooLong is returned when a coded layer of a body holds far
// more bytes than its decoded size limit can explain: a body built to
// make robotsgate decode for long (endless empty gzip members, say)
// rather than a robots.txt.
var errCodedTooLong = errors.New("compressed body far longer than its decoded limit")

// readBody reads the body of a 2xx response, decoded as its
// Content-Encoding says, up to maxBytes decoded bytes: truncated is set
// when there were more, and at most maxBytes+1 decoded bytes are ever
// produced, so a decompression bomb stops there. An encoding it cannot
// decode, a corrupt stream or a read error is an error: the caller must
// not treat the body as a robots.txt then.
func readBody(resp *http.Response, maxBytes int) (body []byte, truncated bool, err error) {
	r, codings, err := DecodeBody(resp.Header, resp.Body, maxBytes)
	if err != nil {
		return nil, false, err
	}
	hint := 512
	if len(codings) == 0 && resp.ContentLength >= 0 {
		// A Content-Length is believed up to maxHint: a hostile origin
		// that announces a large body and sends a few bytes gets no large
		// buffer for them.
		hint = int(min(resp.ContentLength, int64(maxBytes), maxHint)) + 1
	}
	body, err = readAll(io.LimitReader(r, int64(maxBytes)+1), hint)
	if err != nil {
		if len(codings) > 0 {
			err = decodeError{fmt.Errorf("decoding content-encoding %s: %w", strings.Join(codings, ", "), err)}
		}
		return nil, false, err
	}
	if len(body) > maxBytes {
		return body[:maxBytes:maxBytes], true, nil
	}
	return body, false, nil
}

// maxHint bounds the first buffer of a body read by its Content-Length:
// above it, the buffer grows with what arrives.
const maxHint = 64 << 10

// readAll is [io.ReadAll] with a first buffer of hint bytes: a body of
// known length is read into one buffer of its size, not grown to it.
func readAll(r io.Reader, hint int) ([]byte, error) {
	b := make([]byte, 0, max(hint, 1))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append grow it
		}
	}
}

// DecodeBody returns a reader of body decoded as the Content-Encoding
// headers of h say, and those codings in the order they were applied
// (nil when there are none: the reader is body itself; known too when
// creating a decoder failed). It decodes gzip,
// x-gzip and deflate (zlib or raw), stacked up to 4 deep; any other
// coding, a deeper stack, or a corrupt stream header is an error (a
// corrupt stream later on is a read error of the reader).
//
// The caller reads at most maxBytes decoded bytes from it; each coded
// layer may then hold no more than twice that plus 64 KiB (a legitimate
// stream needs about maxBytes of input to produce maxBytes of output,
// plus the decoders' read-ahead): reading more fails with an error that
// says so, so that a stream built to make the decoder work long without
// output (endless empty gzip members) stops, and at most that many bytes
// of body are read. Creating a decoder reads the first bytes of body.
func DecodeBody(h http.Header, body io.Reader, maxBytes int) (io.Reader, []string, error) {
	codings, err := contentCodings(h)
	if err != nil {
		return nil, nil, decodeError{err}
	}
	layerCap := 2*int64(maxBytes) + 64<<10
	r := body
	for i := len(codings) - 1; i >= 0; i-- { // the last coding applied is listed last
		r, err = newDecoder(codings[i], &capReader{r: r, left: layerCap})
		if err != nil {
			return nil, codings, decodeError{fmt.Errorf("content-encoding %s: %w", codings[i], err)}
		}
	}
	return r, codings, nil
}

// contentCodings returns the content codings of h in the order they were
// applied, lower-cased, without "identity" (which changes nothing) and
// empty list elements. It refuses codings it cannot decode and stacks
// deeper than [maxCodings].
func contentCodings(h http.Header) ([]string, error) {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.Trim(c, " \t"))
			switch c {
			case "", "identity":
				continue
			case "gzip", "x-gzip", "deflate":
			default:
				return nil, fmt.Errorf("content-encoding %q cannot be decoded (robotsgate decodes gzip and deflate)", c)
			}
			if out = append(out, c); len(out) > maxCodings {
				return nil, fmt.Errorf("content-encoding stacks more than %d codings", maxCodings)
			}
		}
	}
	return out, nil
}

// newDecoder returns a reader decoding coding (one accepted by
// [contentCodings]) from r. An empty r decodes to nothing. "deflate" is
// meant to be zlib-wrapped (RFC 9110 §8.4.1.2) but some servers send raw
// deflate: the zlib header tells them apart.
func newDecoder(coding string, r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if len(head) == 0 && errors.Is(err, io.EOF) {
		return strings.NewReader(""), nil
	}
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		return zr, nil
	case "deflate":
		if isZlibHeader(head) {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, fmt.Errorf("content-encoding %q cannot be decoded", coding)
}

// isZlibHeader reports whether b starts with a zlib header (RFC 1950
// §2.2): compression method 8 with a window of at most 32 KiB, and a
// check value making the first two bytes a multiple of 31. A raw
// deflate stream starts so only if it opens with a stored block of a
// length whose low byte is 29; decoding it as zlib then fails, which
// makes the file unreachable rather than misread.
func isZlibHeader(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	cmf, flg := b[0], b[1]
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// capReader reads from r and fails with [errCodedTooLong] once more than
// left bytes have been read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errCodedTooLong
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// decodeError marks an error of decoding a body's Content-Encoding; its
// message is err's.
type decodeError struct{ err error }

func (e decodeError) Error() string { return e.err.Error() }
func (e decodeError) Unwrap() error { return e.err }
