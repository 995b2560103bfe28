package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// auditFiles returns the files "robotsgate audit" reads, oldest first:
// each FILE with its rotated siblings ("-" stays standard input), or,
// when no FILE is given, the configured audit_log with its siblings.
func auditFiles(fl auditFlags, env func(string) string) ([]string, error) {
	names := fl.files
	if len(names) == 0 {
		var args []string
		if fl.config != "" {
			args = []string{"-config", fl.config}
		}
		cfg, err := config.Load(args, env)
		if err != nil {
			return nil, err
		}
		if cfg.AuditLog == "-" {
			return nil, fmt.Errorf("no FILE given, and audit_log is standard output: name the audit file (%s)", auditUsage)
		}
		names = []string{cfg.AuditLog}
	}
	var files []string
	for _, n := range names {
		if n == "-" {
			files = append(files, n)
			continue
		}
		fs, err := query.Files(n)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	return files, nil
}

// scanAuditFiles scans files in order into out; with -f the last one is
// followed until ctx ends. A file that cannot be read (missing, a corrupt
// gzip stream) is reported on stderr after what it yielded, and the
// others are still read; the result is then false. A failed write ends
// the scan.
func scanAuditFiles(ctx context.Context, sc *query.Scanner, files []string, fl auditFlags, stdin io.Reader, out *auditOutput, ae auditEnv, stderr io.Writer) bool {
	ok := true
	for i, name := range files {
		var err error
		if fl.follow && i == len(files)-1 {
			if err = out.end(); err == nil {
				out.flush = true
				err = sc.Follow(ctx, name, 0, ae.followInterval, out.emit)
			}
		} else {
			err = scanAuditFile(sc, name, stdin, out)
		}
		var we writeError
		if errors.As(err, &we) {
			auditFail(stderr, 1, "%v", err)
			return false
		}
		if err != nil {
			auditFail(stderr, 1, "%v", err)
			ok = false
		}
	}
	return ok
}

// writeError is an error writing the output.
type writeError struct{ err error }

func (e writeError) Error() string { return "write: " + e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// scanAuditFile scans the file name ("-": stdin) into out.
func scanAuditFile(sc *query.Scanner, name string, stdin io.Reader, out *auditOutput) error {
	if name == "-" {
		r, err := query.Decompress(stdin)
		if err != nil {
			return fmt.Errorf("standard input: %w", err)
		}
		return sc.Scan(r, "standard input", out.emit)
	}
	f, err := query.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return sc.Scan(f, name, out.emit)
}

// auditOutput prints matching records: a table, JSON lines or, with
// -summary, nothing until the summary.
type auditOutput struct {
	w     *bufio.Writer
	fl    auditFlags
	sum   *auditSummary
	tw    *tabwriter.Writer // the table, once its header is written
	rows  int
	flush bool // write each record at once (following)
}

func newAuditOutput(w *bufio.Writer, fl auditFlags) *auditOutput {
	return &auditOutput{w: w, fl: fl, sum: newAuditSummary()}
}

// emit is the [query.Emit] of the output.
func (o *auditOutput) emit(f *query.Fields, line []byte) error {
	switch {
	case o.fl.summary:
		o.sum.add(f)
		if f.Decision == audit.DecisionPaid {
			o.sum.spend.add(line)
		}
		return nil
	case o.fl.asJSON:
		o.w.Write(safetext.JSON(line)) // a hand-edited line may hold raw controls
		o.w.WriteByte('\n')
	case f.Kind != "": // not a request (a configuration reload): its kind where the decision goes
		o.row(shortTime(f.Time), f.Kind, f.Reason, "-", "-", "-")
	default:
		o.row(shortTime(f.Time), f.Decision, f.Reason, f.Agent, f.URL, ruleText(f))
	}
	if o.flush {
		return o.end()
	}
	return nil
}

// tableBlock is how many rows of the table are aligned together (rows are
// held until then).
const tableBlock = 256

// row adds a row to the table, after its header: aligned in blocks of
// [tableBlock] rows, or, when following, in columns of fixed width.
func (o *auditOutput) row(cols ...string) {
	for i, c := range cols {
		cols[i] = printable(c)
	}
	if o.tw == nil {
		o.tw = tabwriter.NewWriter(o.w, 0, 0, 2, ' ', 0)
		o.row("TIME", "DECISION", "REASON", "AGENT", "URL", "RULE")
	}
	if o.flush {
		fmt.Fprintf(o.w, "%-20s  %-8s  %-18s  %-12s  %s  %s\n", cols[0], cols[1], cols[2], cols[3], cols[4], cols[5])
		return
	}
	o.tw.Write([]byte(strings.Join(cols, "\t") + "\n"))
	if o.rows++; o.rows%tableBlock == 0 {
		o.tw.Flush()
	}
}

// printable escapes the control characters of s (which a URL, or a rule
// of a hostile robots.txt, may hold after JSON decoding: a terminal
// escape sequence, a bidi control, a tab that would break the columns),
// see [safetext.Escape].
func printable(s string) string { return safetext.Escape(s) }

// end writes what is held: the rows of the table not yet aligned, and
// the buffer.
func (o *auditOutput) end() error {
	if o.tw != nil {
		o.tw.Flush()
	}
	if err := o.w.Flush(); err != nil {
		return writeError{err}
	}
	return nil
}

// shortTime is an RFC 3339 time to the second, in UTC; t itself when it
// cannot be read.
func shortTime(t string) string {
	pt, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return t
	}
	return pt.UTC().Format(time.RFC3339)
}

// ruleText is the rule and its line, "-" when none decided.
func ruleText(f *query.Fields) string {
	switch {
	case f.Rule == "":
		return "-"
	case f.Line > 0:
		return f.Rule + " (line " + strconv.Itoa(f.Line) + ")"
	}
	return f.Rule
}

// auditSummary counts records per origin and reason, and per rule.
type auditSummary struct {
	byReason map[[2]string]int64
	byRule   map[ruleKey]int64
	spend    auditSpend // the ledger's payments (audit_spend.go)
}

type ruleKey struct {
	Origin string `json:"origin"`
	Rule   string `json:"rule"`
	Line   int    `json:"line,omitempty"`
}

func newAuditSummary() *auditSummary {
	return &auditSummary{byReason: make(map[[2]string]int64), byRule: make(map[ruleKey]int64), spend: auditSpend{}}
}

func (s *auditSummary) add(f *query.Fields) {
	origin := f.Origin
	if f.Kind != "" { // a configuration reload has no origin
		origin = "(" + f.Kind + ")"
	}
	s.byReason[[2]string{origin, f.Reason}]++
	if f.Rule != "" {
		s.byRule[ruleKey{f.Origin, f.Rule, f.Line}]++
	}
}

// reasonCount and [ruleCount] are the rows of a summary.
type reasonCount struct {
	Origin string `json:"origin"`
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

type ruleCount struct {
	ruleKey
	Count int64 `json:"count"`
}

// rows returns the counts, largest first, and the top rules.
func (s *auditSummary) rows(top int) ([]reasonCount, []ruleCount) {
	reasons := make([]reasonCount, 0, len(s.byReason))
	for k, n := range s.byReason {
		reasons = append(reasons, reasonCount{k[0], k[1], n})
	}
	slices.SortFunc(reasons, func(a, b reasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Reason, b.Reason))
	})
	rules := make([]ruleCount, 0, len(s.byRule))
	for k, n := range s.byRule {
		rules = append(rules, ruleCount{k, n})
	}
	slices.SortFunc(rules, func(a, b ruleCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Line, b.Line))
	})
	return reasons, rules[:min(top, len(rules))]
}

// write prints the summary, as JSON or as tables.
func (s *auditSummary) write(w io.Writer, asJSON bool, top int, st query.Stats, files int) {
	reasons, rules := s.rows(top)
	if asJSON {
		enc := json.NewEncoder(safetext.Writer(w))
		enc.SetEscapeHTML(false)
		_ = enc.Encode(struct {
			Matched  int64         `json:"matched"`
			Lines    int64         `json:"lines"`
			Files    int           `json:"files"`
			ByReason []reasonCount `json:"by_origin_reason"`
			TopRules []ruleCount   `json:"top_rules"`
			Spend    []spendRow    `json:"spend"`
			// Malformed lines were skipped; MalformedAt names the first ones.
			Malformed   int64    `json:"malformed"`
			MalformedAt []string `json:"malformed_lines,omitempty"`
		}{st.Matched, st.Lines, files, reasons, rules, s.spend.rows(), st.Malformed, st.MalformedAt})
		return
	}
	fmt.Fprintf(w, "%d matching records (%d lines read in %d %s)\n", st.Matched, st.Lines, files, plural(files, "file", "files"))
	if st.Malformed > 0 {
		fmt.Fprintf(w, "%s\n", printable(malformedText(st)))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-7s  %-18s  %s\n", "COUNT", "REASON", "ORIGIN")
	for _, r := range reasons {
		fmt.Fprintf(w, "%7d  %-18s  %s\n", r.Count, printable(r.Reason), printable(r.Origin))
	}
	defer s.spend.write(w)
	if len(rules) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-7s  %-40s  %s\n", "COUNT", "RULE", "ORIGIN")
	for _, r := range rules {
		fmt.Fprintf(w, "%7d  %-40s  %s\n", r.Count, printable(ruleText(&query.Fields{Rule: r.Rule, Line: r.Line})), printable(r.Origin))
	}
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
