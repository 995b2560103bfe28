package query

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes is the longest audit line a Scanner reads; a longer one
// is counted as malformed and skipped.
const MaxLineBytes = 16 << 20

// readBufferBytes is the size of a Scanner's read buffer.
const readBufferBytes = 256 << 10

// Stats count what a Scanner read.
type Stats struct {
	Bytes     int64 // bytes read
	Lines     int64 // lines read, blank ones included
	Matched   int64 // records that matched the filter
	Malformed int64 // lines that are no audit record (skipped)
	// FirstMalformed names the first malformed line ("file:line: why").
	FirstMalformed string
	// MalformedAt names the first [MaxMalformedListed] malformed lines
	// ("file:line").
	MalformedAt []string
}

// MaxMalformedListed bounds how many malformed lines [Stats.MalformedAt]
// names.
const MaxMalformedListed = 20

// Emit receives a matching record: its fields and its line (without the
// newline; valid only during the call). An error stops the scan and is
// returned by Scan.
type Emit func(f *Fields, line []byte) error

// Scanner reads audit lines and passes on the records that match its
// filter. Lines that cannot match are rejected by their bytes (they lack
// a filter's value) without being parsed; the others are parsed as far
// as the filter and the output need ([scanFields]). A malformed line is
// counted in Stats and skipped, never an error. A Scanner is not safe for
// concurrent use.
type Scanner struct {
	// Brief leaves [Fields.Time] and Fields.URL empty, saving their
	// allocation per record for callers that only count (a summary).
	Brief bool

	m      *matcher
	stats  Stats
	raw    rawFields
	f      Fields
	intern interner
	long   []byte // a line longer than the read buffer, being assembled
	// tooLong says the line being read exceeds [MaxLineBytes]: the rest of
	// it is dropped.
	tooLong bool
	lineNo  int64 // the line's number in the source being read
}

// NewScanner returns a Scanner for f, or an error when f is invalid (an
// origin that is not one).
func NewScanner(f Filter) (*Scanner, error) {
	m, err := compile(f)
	if err != nil {
		return nil, err
	}
	return &Scanner{m: m, intern: make(interner)}, nil
}

// Stats returns the counts so far.
func (s *Scanner) Stats() Stats { return s.stats }

// Scan reads r to its end, name naming it in [Stats.FirstMalformed], and
// passes each matching record to emit. It returns a read error or emit's
// error. A last line without a newline is read as a line.
func (s *Scanner) Scan(r io.Reader, name string, emit Emit) error {
	br := bufio.NewReaderSize(r, readBufferBytes)
	s.lineNo = 0
	_, err := s.scan(br, name, emit, true)
	return err
}

// scan reads br until EOF. With final false, a last line without its
// newline is kept for the next call, which reads the rest of it, and
// partial is true (Follow waits for it).
func (s *Scanner) scan(br *bufio.Reader, name string, emit Emit, final bool) (partial bool, _ error) {
	for {
		line, err := br.ReadSlice('\n')
		s.stats.Bytes += int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			s.tooLong = s.tooLong || len(s.long)+len(line) > MaxLineBytes
			if !s.tooLong {
				s.long = append(s.long, line...)
			}
			continue
		}
		if len(s.long) > 0 || s.tooLong {
			s.long = append(s.long, line...)
			line = s.long
			s.tooLong = s.tooLong || len(line) > MaxLineBytes+1 // +1: the newline
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("read %s: %w", name, err)
		}
		if err != nil && len(line) > 0 && !final && !s.tooLong {
			if len(s.long) == 0 {
				s.long = append(s.long, line...)
			}
			return true, nil // the rest of the line comes with the next read
		}
		if len(line) > 0 {
			s.lineNo++
			if err := s.line(bytes.TrimSuffix(line, []byte("\n")), name, emit); err != nil {
				return false, err
			}
		}
		s.long, s.tooLong = s.long[:0], false
		if err != nil {
			return false, nil
		}
	}
}

// line handles one line.
func (s *Scanner) line(line []byte, name string, emit Emit) error {
	s.stats.Lines++
	if s.tooLong {
		s.malformed(name, fmt.Errorf("longer than %d bytes", MaxLineBytes))
		return nil
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	// Every line is checked this far: a line cut short (a crash while
	// writing) or one that is no JSON object is counted even when no
	// filter could match it.
	if trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		s.malformed(name, errMalformed)
		return nil
	}
	if !s.m.mayMatch(line) || s.m.outOfTime(line) {
		return nil
	}
	if err := scanFields(line, &s.raw); err != nil {
		s.malformed(name, err)
		return nil
	}
	ok, err := s.m.match(&s.raw)
	if err == nil && ok {
		err = s.raw.fields(&s.f, s.intern, s.Brief)
	}
	if err != nil {
		s.malformed(name, err)
		return nil
	}
	if !ok {
		return nil
	}
	s.stats.Matched++
	return emit(&s.f, line)
}

// malformed counts a malformed line.
func (s *Scanner) malformed(name string, why error) {
	s.stats.Malformed++
	if len(s.stats.MalformedAt) < MaxMalformedListed {
		s.stats.MalformedAt = append(s.stats.MalformedAt, fmt.Sprintf("%s:%d", name, s.lineNo))
	}
	if s.stats.FirstMalformed == "" {
		s.stats.FirstMalformed = fmt.Sprintf("%s:%d: %v", name, s.lineNo, why)
	}
}
