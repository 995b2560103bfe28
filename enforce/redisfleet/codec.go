package redisfleet

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
)

// The stored form of an [enforce.Entry] (everything but what
// Entry.Rebuild derives) is a short text header that the Lua scripts
// read, then the entry in a compact binary form compressed with DEFLATE:
//
//	"3|<fetched ms>|<status: o, a or u>|<good copy: 0 or 1>|<failures>|" DEFLATE(payload)
//
// The payload holds the key ([enforce.Key.String]), the result, the four times (nanoseconds;
// a flag for the zero time), the failure count and the good copy, with
// uvarint lengths and numbers. Version 3 adds to each result its
// validators (ETag, Last-Modified), two flags (no-cache, revalidated by a
// 304) and the SHA-256 of its body (32 bytes, or none); version 2 has
// them not. Replicas read both (a version 2 body is hashed on load);
// a replica that knows only version 2 takes a version 3 entry as
// undecodable: it deletes it and fetches the document again, never
// reading it wrongly. DEFLATE (compress/flate) rather than gzip
// or zlib: the same algorithm without their 10 to 18 bytes of header and
// checksum, which Redis's own integrity makes useless; and a preset
// dictionary of common robots.txt lines (entryDict), which helps the
// many small files most. A value that does not start with this header (the JSON
// of version 1, or anything else) is an entry robotsgate cannot decode.

// entryVersion is the header's first field. Readers treat entries of
// another version as undecodable (deleted, the origin fetched again).
const entryVersion = "3"

// entryVersion2 is the previous version, with the same header: still
// read, never written.
const entryVersion2 = "2"

// entryDict is the DEFLATE preset dictionary. It is part of the stored
// format: changing it requires a new [entryVersion]. The most common
// strings come last (DEFLATE codes near matches with fewer bits).
const entryDict = "# robots.txt\n# See http://www.robotstxt.org/robotstxt.html\n" +
	"User-agent: Googlebot-Image\nUser-agent: Mediapartners-Google\nUser-agent: AdsBot-Google\n" +
	"User-agent: bingbot\nUser-agent: Baiduspider\nUser-agent: YandexBot\nUser-agent: GPTBot\n" +
	"User-agent: CCBot\nUser-agent: ClaudeBot\nUser-agent: Google-Extended\n" +
	"Disallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\nDisallow: /cgi-bin/\nDisallow: /admin/\n" +
	"Disallow: /login\nDisallow: /cart\nDisallow: /checkout\nDisallow: /account\nDisallow: /api/\n" +
	"Disallow: /search\nDisallow: /*?\nDisallow: /*.php$\nDisallow: /tmp/\nDisallow: /private/\n" +
	"Crawl-delay: 10\nSitemap: https://www.example.com/sitemap.xml\nSitemap: https://www.\n" +
	"/robots.txt\nhttps://www.\nhttp://www.\n.com/\n" +
	"User-agent: Googlebot\nUser-agent: *\nAllow: /\nDisallow: /\nDisallow: \nUser-agent: *\nDisallow: /"

// maxPayload bounds the decompressed payload of a stored entry: two
// bodies of at most maxBytes each, and room for the rest. A hostile or
// corrupt value cannot make a replica inflate more than this.
func maxPayload(maxBytes int) int {
	if maxBytes <= 0 {
		return 64 << 20
	}
	return 2*maxBytes + 1<<20
}

var statusCodes = map[enforce.Status]byte{enforce.StatusOK: 'o', enforce.StatusUnavailable: 'a', enforce.StatusUnreachable: 'u'}

var flateWriters = sync.Pool{New: func() any {
	w, err := flate.NewWriterDict(io.Discard, flate.BestCompression, []byte(entryDict))
	if err != nil {
		panic(err) // only for an invalid level
	}
	return w
}}

// flateReaders keeps inflaters, whose state is large, for reuse.
var flateReaders sync.Pool

// encodeRedisEntry returns the stored form of e.
func encodeRedisEntry(e *enforce.Entry) ([]byte, error) {
	st, ok := statusCodes[e.Result.Status]
	if !ok {
		return nil, fmt.Errorf("encode robots.txt entry: unknown status %q", e.Result.Status)
	}
	good := byte('0')
	if e.Good != nil {
		good = '1'
	}
	p := payload{v3: true}
	p.str(e.Key.String())
	p.result(e.Result)
	for _, t := range []time.Time{e.FetchedAt, e.Expires, e.GoodAt, e.UnreachableSince} {
		p.time(t)
	}
	p.uint(uint64(max(e.Failures, 0)))
	if e.Good != nil {
		p.result(*e.Good)
	}

	out := bytes.NewBuffer(make([]byte, 0, 32+len(p.b)/2))
	out.WriteString(entryVersion + "|" + strconv.FormatInt(e.FetchedAt.UnixMilli(), 10) + "|")
	out.Write([]byte{st, '|', good, '|'})
	out.WriteString(strconv.Itoa(max(e.Failures, 0)) + "|")
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(out)
	if _, err := w.Write(p.b); err != nil {
		return nil, fmt.Errorf("encode robots.txt entry: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode robots.txt entry: %w", err)
	}
	return out.Bytes(), nil
}

// entryHeader is the header of a stored entry.
type entryHeader struct {
	v3        bool // version 3, else 2
	fetchedMS int64
	status    byte
	good      byte
	failures  int
}

// parseEntryHeader splits a stored entry into its header and the
// compressed payload.
func parseEntryHeader(data []byte) (entryHeader, []byte, error) {
	var h entryHeader
	f := bytes.SplitN(data, []byte("|"), 6)
	if len(f) != 6 || (string(f[0]) != entryVersion && string(f[0]) != entryVersion2) {
		return h, nil, errors.New("not a robots.txt entry of version " + entryVersion + " or " + entryVersion2)
	}
	h.v3 = string(f[0]) == entryVersion
	var e1, e2 error
	h.fetchedMS, e1 = strconv.ParseInt(string(f[1]), 10, 64)
	h.failures, e2 = strconv.Atoi(string(f[4]))
	if e1 != nil || e2 != nil || len(f[2]) != 1 || len(f[3]) != 1 {
		return h, nil, errors.New("bad header")
	}
	h.status, h.good = f[2][0], f[3][0]
	return h, f[5], nil
}

// decodeRedisEntry returns the [enforce.Entry] of key stored as data, with
// Parsed rebuilt from its bodies (parsing at most maxBytes). The key the
// payload holds is not read back: the entry is key's, whose kind says how
// its bodies are parsed.
func decodeRedisEntry(data []byte, key enforce.Key, maxBytes int) (*enforce.Entry, error) {
	e, err := decodeEntry(data, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("decode robots.txt entry: %w", err)
	}
	e.Key = key
	e.Rebuild(maxBytes)
	return e, nil
}

func decodeEntry(data []byte, maxBytes int) (*enforce.Entry, error) {
	h, z, err := parseEntryHeader(data)
	if err != nil {
		return nil, err
	}
	limit := maxPayload(maxBytes)
	var r io.ReadCloser
	if v, ok := flateReaders.Get().(io.ReadCloser); ok {
		r = v
		_ = r.(flate.Resetter).Reset(bytes.NewReader(z), []byte(entryDict))
	} else {
		r = flate.NewReaderDict(bytes.NewReader(z), []byte(entryDict))
	}
	raw, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	flateReaders.Put(r)
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("payload over %d bytes", limit)
	}
	d := reader{b: raw, v3: h.v3}
	_ = d.str() // the key, given by the caller
	e := &enforce.Entry{Result: d.result()}
	e.FetchedAt, e.Expires, e.GoodAt, e.UnreachableSince = d.time(), d.time(), d.time(), d.time()
	e.Failures = int(d.uint())
	if h.good == '1' {
		g := d.result()
		e.Good = &g
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	if statusCodes[e.Result.Status] != h.status || e.Failures != h.failures ||
		e.FetchedAt.UnixMilli() != h.fetchedMS || (h.good != '0' && h.good != '1') {
		return nil, errors.New("header and payload differ")
	}
	return e, nil
}

// payload builds the binary form (of version 3 when v3 is set).
type payload struct {
	b  []byte
	v3 bool
}

func (p *payload) uint(v uint64) { p.b = binary.AppendUvarint(p.b, v) }
func (p *payload) int(v int64)   { p.b = binary.AppendVarint(p.b, v) }
func (p *payload) str(s string)  { p.uint(uint64(len(s))); p.b = append(p.b, s...) }
func (p *payload) bytes(v []byte) {
	p.uint(uint64(len(v)))
	p.b = append(p.b, v...)
}

// time appends 0 for the zero time, else 1 and the Unix nanoseconds.
func (p *payload) time(t time.Time) {
	if t.IsZero() {
		p.b = append(p.b, 0)
		return
	}
	p.b = append(p.b, 1)
	p.int(t.UnixNano())
}

func (p *payload) result(r enforce.FetchResult) {
	p.str(string(r.Status))
	p.uint(uint64(max(r.HTTPStatus, 0)))
	var flags uint64
	if r.Truncated {
		flags |= 1
	}
	if r.HasMaxAge {
		flags |= 2
	}
	if r.NoCache && p.v3 {
		flags |= 4
	}
	if r.NotModified && p.v3 {
		flags |= 8
	}
	p.uint(flags)
	p.int(int64(r.MaxAge))
	p.str(r.FinalURL)
	p.str(r.Err)
	p.str(string(r.ErrKind))
	p.bytes(r.Body)
	if p.v3 {
		p.str(r.ETag)
		p.str(r.LastModified)
		sum, _ := hex.DecodeString(r.SHA256) // nil unless a valid hash
		if len(sum) != sha256.Size {
			sum = nil
		}
		p.bytes(sum)
	}
}

// reader reads the binary form; the first error sticks.
type reader struct {
	b   []byte
	v3  bool // the payload is of version 3
	err error
}

func (d *reader) fail(what string) {
	if d.err == nil {
		d.err = errors.New("truncated or bad " + what)
	}
	d.b = nil
}

func (d *reader) uint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *reader) int() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one number with read ([binary.Uvarint] or [binary.Varint]).
func readVarint[T uint64 | int64](d *reader, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *reader) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *reader) str() string { return string(d.bytes()) }

func (d *reader) time() time.Time {
	if len(d.b) == 0 {
		d.fail("time")
		return time.Time{}
	}
	set := d.b[0]
	d.b = d.b[1:]
	switch set {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, d.int()).UTC()
	}
	d.fail("time")
	return time.Time{}
}

func (d *reader) result() enforce.FetchResult {
	r := enforce.FetchResult{Status: enforce.Status(d.str()), HTTPStatus: int(min(d.uint(), 999))}
	flags := d.uint()
	r.Truncated, r.HasMaxAge = flags&1 != 0, flags&2 != 0
	r.MaxAge = time.Duration(d.int())
	r.FinalURL, r.Err, r.ErrKind = d.str(), d.str(), enforce.FetchErrorKind(d.str())
	if b := d.bytes(); len(b) > 0 {
		r.Body = b
	}
	if d.v3 {
		d.v3result(&r, flags)
	}
	if _, ok := statusCodes[r.Status]; !ok && d.err == nil {
		d.err = fmt.Errorf("unknown status %q", r.Status)
	}
	return r
}

// v3result reads the fields version 3 adds to a result with flags.
func (d *reader) v3result(r *enforce.FetchResult, flags uint64) {
	r.NoCache, r.NotModified = flags&4 != 0, flags&8 != 0
	r.ETag, r.LastModified = d.str(), d.str()
	switch sum := d.bytes(); len(sum) {
	case 0:
	case sha256.Size:
		r.SHA256 = hex.EncodeToString(sum)
	default:
		d.fail("hash")
	}
}
