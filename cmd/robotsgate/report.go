package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

const reportUsage = "usage: robotsgate report [-since T] [-until T] [-identity USER] [-format table|csv|json|html] [-top N] [-config FILE] [FILE...]"

// reportFormats are the values of -format.
var reportFormats = []string{"table", "csv", "json", "html"}

// reportFlags are the parsed flags of "robotsgate report".
type reportFlags struct {
	filter query.Filter
	format string
	top    int
	files  auditFlags // files and config, read as "robotsgate audit" reads them
}

// runReport implements "robotsgate report": the crawl report of the
// volume records ([audit.KindVolume]) in the audit files (each FILE with
// its rotated siblings; none: the configured audit_log) between -since
// and -until: top origins by volume, refusals by reason, the opt-outs
// each site stated and the robots.txt versions decisions used. Exit
// status: 0, 1 when a file cannot be read, 2 for a usage error.
func runReport(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer, now time.Time) int {
	fl, code := parseReportFlags(args, now, stdout, stderr)
	if code >= 0 {
		return code
	}
	files, err := auditFiles(fl.files, env)
	if err != nil {
		return reportFail(stderr, 2, "%v", err)
	}
	sc, err := query.NewScanner(fl.filter)
	if err != nil {
		return reportFail(stderr, 2, "%v", err)
	}
	rb := newReportBuilder()
	code = 0
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return reportFail(stderr, 1, "%v", err)
		}
		if err := scanReportFile(sc, name, stdin, rb.add); err != nil {
			code = reportFail(stderr, 1, "%v", err)
		}
	}
	rep := rb.report(fl.filter, now)
	if err := writeReport(stdout, rep, fl.format, fl.top); err != nil {
		return reportFail(stderr, 1, "%v", err)
	}
	if st := sc.Stats(); st.Malformed > 0 {
		fmt.Fprintf(stderr, "robotsgate report: %s (first: %s)\n", malformedText(st), st.FirstMalformed)
	}
	if rb.bad > 0 {
		fmt.Fprintf(stderr, "robotsgate report: %d record(s) with an unreadable volume skipped\n", rb.bad)
	}
	return code
}

// parseReportFlags parses args; code is -1 when the command is to run,
// else its exit status.
func parseReportFlags(args []string, now time.Time, stdout, stderr io.Writer) (reportFlags, int) {
	var fl reportFlags
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	since := fs.String("since", "", "only intervals that ended at or after `T`: a duration back from now (24h) or an RFC 3339 time")
	until := fs.String("until", "", "only intervals that ended before `T` (as -since)")
	fs.StringVar(&fl.filter.User, "identity", "", "only the requests of this proxy `user` (credentials)")
	fs.StringVar(&fl.format, "format", "table", "output `format`: table, csv, json or html (one self-contained page with charts)")
	fs.IntVar(&fl.top, "top", 20, "how many origins the table and the html page list (csv and json list all)")
	fs.StringVar(&fl.files.config, "config", "", "configuration `file` whose audit_log is read when no FILE is given")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, reportUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return fl, 0
		}
		return fl, reportFail(stderr, 2, "%v (%s)", config.FlagHint(fs, err), reportUsage)
	}
	fl.files.files = fs.Args()
	var err error
	if fl.filter.Since, err = parseWhen(*since, now); err != nil {
		return fl, reportFail(stderr, 2, "-since: %v", err)
	}
	if fl.filter.Until, err = parseWhen(*until, now); err != nil {
		return fl, reportFail(stderr, 2, "-until: %v", err)
	}
	fl.filter.Kinds = []string{audit.KindVolume, query.KindRequest}
	switch {
	case !slices.Contains(reportFormats, fl.format):
		return fl, reportFail(stderr, 2, "-format: %q is not one of %s%s", fl.format, strings.Join(reportFormats, ", "), config.Suggest(fl.format, reportFormats))
	case fl.top < 1:
		return fl, reportFail(stderr, 2, "-top must be at least 1")
	}
	for _, f := range fl.files.files {
		if strings.HasPrefix(f, "-") && f != "-" {
			return fl, reportFail(stderr, 2, "flags must precede files: %q comes after a file (%s)", f, reportUsage)
		}
	}
	return fl, -1
}

// reportFail prints one line on stderr and returns code.
func reportFail(stderr io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, "robotsgate report: "+format+"\n", a...)
	return code
}

// volumeLine is what the report reads of an audit record: a volume
// record's counts, or the robots.txt version a decision used.
type volumeLine struct {
	Kind         string        `json:"kind"`
	Origin       string        `json:"origin"`
	RobotsSHA256 string        `json:"robots_sha256"`
	Volume       *volumeCounts `json:"volume"`
}

// volumeCounts are the counts of a volume record ([audit.Volume]).
type volumeCounts struct {
	Requests     int64            `json:"requests"`
	Bytes        int64            `json:"bytes"`
	Status       map[string]int64 `json:"status"`
	StatusBytes  map[string]int64 `json:"status_bytes"`
	Refused      map[string]int64 `json:"refused"`
	OptOuts      map[string]int64 `json:"opt_outs"`
	RobotsSHA256 []string         `json:"robots_sha256"`
	Origins      int64            `json:"origins"`
}

// robotsField is how a record names the robots.txt version it used.
var robotsField = []byte(`"robots_sha256"`)

// add takes one matching audit line.
func (rb *reportBuilder) add(f *query.Fields, line []byte) error {
	if f.Kind != audit.KindVolume && !bytes.Contains(line, robotsField) {
		return nil // a decision that names no robots.txt version
	}
	var vl volumeLine
	if err := json.Unmarshal(line, &vl); err != nil || (f.Kind == audit.KindVolume && vl.Volume == nil) {
		rb.bad++
		return nil
	}
	if f.Kind != audit.KindVolume {
		rb.robots(vl.Origin, vl.RobotsSHA256)
		return nil
	}
	rb.volume(vl.Origin, vl.Volume)
	return nil
}

// scanReportFile scans the audit file name ("-": stdin) with sc.
func scanReportFile(sc *query.Scanner, name string, stdin io.Reader, emit query.Emit) error {
	if name == "-" {
		r, err := query.Decompress(stdin)
		if err != nil {
			return fmt.Errorf("standard input: %w", err)
		}
		return sc.Scan(r, "standard input", emit)
	}
	f, err := query.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return sc.Scan(f, name, emit)
}
