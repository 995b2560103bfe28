package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// errMalformed is wrapped by the errors of [scanFields]: the line is not
// one JSON object.
var errMalformed = errors.New("not a JSON object")

// Fields are the values of one audit record that queries filter on and
// print. The record's other fields stay in its line.
type Fields struct {
	Kind     string // "" for a request's decision, else the record's kind ("config-reload")
	Time     string // RFC 3339, as written
	Decision string
	Reason   string
	Origin   string
	URL      string
	Agent    string
	Rule     string
	Line     int
}

// field is the index of a field of [Fields] among those queries read
// ([keyField] names them).
type field uint8

const (
	fTime field = iota
	fDecision
	fReason
	fOrigin
	fURL
	fAgent
	fRule
	fLine
	fUser
	fKind
	numFields
)

// keyField returns the field named key; ok is false for a key queries do
// not read.
func keyField(key []byte) (field, bool) {
	switch string(key) { // no allocation: the compiler compares the bytes
	case "time":
		return fTime, true
	case "decision":
		return fDecision, true
	case "reason":
		return fReason, true
	case "origin":
		return fOrigin, true
	case "url":
		return fURL, true
	case "agent":
		return fAgent, true
	case "rule":
		return fRule, true
	case "line":
		return fLine, true
	case "user":
		return fUser, true
	case "kind":
		return fKind, true
	}
	return 0, false
}

// rawFields are the JSON values (tokens, quotes included) of the fields
// of one line, nil when absent: views into the line. A repeated key keeps
// its first value.
type rawFields [numFields][]byte

// scanFields reads the top-level members of the JSON object line and
// keeps the values of the ones queries use in raw. Other members,
// objects and arrays included, are skipped without being decoded; the
// structure is checked up to the last member read (the whole line when
// a field is absent), a line cut short there is an error.
func scanFields(line []byte, raw *rawFields) error {
	*raw = rawFields{}
	found := 0
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errMalformed
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return trailing(line, i+1)
	}
	for {
		key, next, err := scanString(line, i)
		if err != nil {
			return err
		}
		i = skipSpace(line, next)
		if i >= len(line) || line[i] != ':' {
			return errMalformed
		}
		i = skipSpace(line, i+1)
		start := i
		if i, err = skipValue(line, i); err != nil {
			return err
		}
		if fd, ok := keyField(key); ok && raw[fd] == nil {
			raw[fd] = line[start:i]
			if found++; found == int(numFields) {
				// The rest of the line is not read: the cheap check of
				// Scanner.line (a line ends with "}") catches lines cut short.
				return nil
			}
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return errMalformed
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return trailing(line, i+1)
		default:
			return errMalformed
		}
	}
}

// text returns the string value of field fd: a view into the line when
// it holds no escape, else a decoded copy; nil for an absent field or
// null. A value that is not a string is an error.
func (r *rawFields) text(fd field) ([]byte, error) {
	v := r[fd]
	if v == nil || string(v) == "null" {
		return nil, nil
	}
	if len(v) < 2 || v[0] != '"' {
		return nil, errMalformed
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, errMalformed
	}
	return []byte(s), nil
}

// number returns the integer value of field fd, 0 when absent.
func (r *rawFields) number(fd field) (int, error) {
	v := r[fd]
	if v == nil || string(v) == "null" {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, errMalformed
	}
	return n, nil
}

// fields converts r. Values that repeat across records (origin, reason,
// agent, rule, ...) are taken from intern: the scan of a large file
// allocates only its times and URLs, and with brief not those either
// (they are left empty). An error says a field has the wrong type.
func (r *rawFields) fields(f *Fields, intern interner, brief bool) error {
	var errs [numFields]error
	str := func(fd field, in interner) string {
		if brief && in == nil {
			return "" // Time and URL: not wanted
		}
		b, err := r.text(fd)
		errs[fd] = err
		if in != nil {
			return in.string(b)
		}
		return string(b)
	}
	*f = Fields{Time: str(fTime, nil), Decision: str(fDecision, intern), Reason: str(fReason, intern),
		Origin: str(fOrigin, intern), URL: str(fURL, nil), Agent: str(fAgent, intern),
		Rule: str(fRule, intern), Kind: str(fKind, intern)}
	f.Line, errs[fLine] = r.number(fLine)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// maxInterned bounds an interner: past it, strings are allocated.
const maxInterned = 1 << 14

// interner hands out one string per distinct value.
type interner map[string]string

func (in interner) string(b []byte) string {
	if s, ok := in[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

// trailing checks that only white space follows the object's end at i.
func trailing(line []byte, i int) error {
	if skipSpace(line, i) != len(line) {
		return errMalformed
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString returns the contents of the JSON string starting at i
// (undecoded; keys of audit records have no escapes) and the index after
// its closing quote.
func scanString(b []byte, i int) ([]byte, int, error) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, errMalformed
	}
	end, err := stringEnd(b, i+1)
	if err != nil {
		return nil, 0, err
	}
	return b[i+1 : end], end + 1, nil
}

// stringEnd returns the index of the quote closing the string whose
// contents start at i.
func stringEnd(b []byte, i int) (int, error) {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errMalformed
		}
		q := i + j
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q, nil
		}
		i = q + 1
	}
}

// skipValue returns the index after the JSON value starting at i.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errMalformed
	}
	switch c := b[i]; {
	case c == '"':
		end, err := stringEnd(b, i+1)
		return end + 1, err
	case c == '{' || c == '[':
		return skipNested(b, i)
	default: // number, true, false, null
		j := i
		for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] >= '0' && b[j] <= '9' || b[j] >= 'a' && b[j] <= 'z' || b[j] == 'E') {
			j++
		}
		if j == i {
			return 0, errMalformed
		}
		return j, nil
	}
}

// skipNested returns the index after the object or array starting at i,
// checking only that brackets balance outside strings.
func skipNested(b []byte, i int) (int, error) {
	var buf [16]byte
	stack := buf[:0]
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end, err := stringEnd(b, i+1)
			if err != nil {
				return 0, err
			}
			i = end
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return 0, errMalformed
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, errMalformed
}
