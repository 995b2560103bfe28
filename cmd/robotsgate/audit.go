package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

const auditUsage = "usage: robotsgate audit [-origin O] [-since T] [-until T] [-reason R] [-decision D] [-kind K] [-agent A] [-user U] [-url PREFIX] [-json | -summary] [-f] [FILE...] | robotsgate audit -document SHA"

// auditEnv is what "robotsgate audit" takes from its caller besides the
// arguments: the clock of -since/-until durations and how often -f
// looks for new lines (0: [query.Scanner.Follow]'s default).
type auditEnv struct {
	now            func() time.Time
	followInterval time.Duration
}

// auditFlags are the parsed flags of "robotsgate audit".
type auditFlags struct {
	filter          query.Filter
	asJSON, summary bool
	follow          bool
	top             int
	config          string
	files           []string
	document        string // -document: print this kept policy document (documents.go)
}

// runAudit implements "robotsgate audit": it reads audit files (each FILE
// with its rotated siblings, gzip-compressed or not; "-" is standard
// input; no FILE: the configured audit_log), prints the records that
// match the filters (a table, -json the lines as written, -summary the
// counts per origin and reason and the top rules) and, with -f, goes on
// printing the records appended to the live file until ctx ends. A
// malformed line is skipped and counted: their number and the first one
// go to stderr. Exit status: 0, 1 when a file cannot be read, 2 for a
// usage error. With -verify it checks the files' hash chain instead
// ([runAuditVerify]).
func runAudit(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer, ae auditEnv) int {
	if isAuditVerify(args) {
		return runAuditVerify(args, env, stdout, stderr) // audit_verify.go
	}
	fl, code := parseAuditFlags(args, ae.now(), stdout, stderr)
	if code >= 0 {
		return code
	}
	if fl.document != "" {
		return printDocument(ctx, fl, env, stdout, stderr)
	}
	files, err := auditFiles(fl, env)
	if err != nil {
		return auditFail(stderr, 2, "%v", err)
	}
	sc, err := query.NewScanner(fl.filter)
	if err != nil {
		return auditFail(stderr, 2, "-origin: %v", err)
	}
	sc.Brief = fl.summary
	w := bufio.NewWriterSize(stdout, 64<<10)
	out := newAuditOutput(w, fl)
	code = 0
	if !scanAuditFiles(ctx, sc, files, fl, stdin, out, ae, stderr) {
		code = 1
	}
	if fl.summary {
		out.sum.write(w, fl.asJSON, fl.top, sc.Stats(), len(files))
	}
	if err := out.end(); err != nil && code == 0 {
		code = auditFail(stderr, 1, "%v", err)
	}
	if st := sc.Stats(); st.Malformed > 0 {
		fmt.Fprintf(stderr, "robotsgate audit: %s (first: %s)\n", malformedText(st), st.FirstMalformed)
	}
	return code
}

// malformedText says how many malformed lines were skipped, and where.
func malformedText(st query.Stats) string {
	more := ""
	if st.Malformed > int64(len(st.MalformedAt)) {
		more = ", ..."
	}
	return fmt.Sprintf("%d malformed line(s) skipped: %s%s", st.Malformed, strings.Join(st.MalformedAt, ", "), more)
}

// parseAuditFlags parses args; code is -1 when the command is to run,
// else its exit status (help, or a usage error reported on stderr).
func parseAuditFlags(args []string, now time.Time, stdout, stderr io.Writer) (auditFlags, int) {
	var fl auditFlags
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&fl.filter.Origin, "origin", "", "only records of this `origin` (https://example.com) or host (example.com: http and https)")
	since := fs.String("since", "", "only records at or after `T`: a duration back from now (1h, 30m) or an RFC 3339 time")
	until := fs.String("until", "", "only records before `T` (as -since)")
	reasons := fs.String("reason", "", "only records with one of these comma-separated `reasons` (disallowed, robots-unreachable, ...)")
	decisions := fs.String("decision", "", "only records with one of these comma-separated `decisions` (allowed, blocked, reported)")
	kinds := fs.String("kind", query.KindRequest, "only records of these comma-separated `kinds`: request (decisions on requests), config-reload (configuration reloads), audit-digest (signed digests of the hash chain), volume (the crawl report's counts, robotsgate report), or all")
	fs.StringVar(&fl.filter.Agent, "agent", "", "only records decided for this `agent` (case-insensitive)")
	fs.StringVar(&fl.filter.User, "user", "", "only records of requests sent by this proxy `user` (credentials)")
	fs.StringVar(&fl.filter.URLPrefix, "url", "", "only records whose URL starts with `PREFIX`")
	fs.BoolVar(&fl.asJSON, "json", false, "print the matching records as JSON lines, as written (with -summary: the summary as JSON)")
	fs.BoolVar(&fl.summary, "summary", false, "print counts per origin and reason, and the top rules, instead of the records")
	fs.IntVar(&fl.top, "top", 10, "how many rules -summary lists")
	fs.BoolVar(&fl.follow, "f", false, "after the files, print records as they are appended to the live file, until interrupted")
	fs.StringVar(&fl.config, "config", "", "configuration `file` whose audit_log is read when no FILE is given")
	fs.StringVar(&fl.document, "document", "", "print the policy document (robots.txt, tdmrep.json, license) kept under this `SHA`-256, as audit records name it (robots_sha256, ...; a unique prefix of at least 4 digits will do)")
	fs.Bool("verify", false, "check the hash chain and digest signatures of the files instead (robotsgate audit -verify -h)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, auditUsage, fs)
			return fl, 0
		}
		return fl, auditFail(stderr, 2, "%v (%s)", config.FlagHint(fs, err), auditUsage)
	}
	fl.files = fs.Args()
	var err error
	if fl.filter.Since, err = parseWhen(*since, now); err != nil {
		return fl, auditFail(stderr, 2, "-since: %v", err)
	}
	if fl.filter.Until, err = parseWhen(*until, now); err != nil {
		return fl, auditFail(stderr, 2, "-until: %v", err)
	}
	fl.filter.Reasons, fl.filter.Decisions, fl.filter.Kinds = config.SplitList(*reasons), config.SplitList(*decisions), config.SplitList(*kinds)
	if slices.Contains(fl.filter.Kinds, "all") {
		fl.filter.Kinds = nil
	}
	if err := checkAuditFlags(fl); err != nil {
		return fl, auditFail(stderr, 2, "%v (%s)", err, auditUsage)
	}
	return fl, -1
}

// auditKinds are the values of -kind.
var auditKinds = []string{query.KindRequest, audit.KindConfigReload, audit.KindDigest, audit.KindVolume, "all"}

// auditReasons are the values of -reason: every reason of a request's
// record, and the results of a configuration reload.
func auditReasons() []string {
	return slices.Concat(answer.ReasonNames(), []string{proxy.ReloadOK, proxy.ReloadInvalid})
}

// checkAuditFlags checks the values and combinations of flags.
func checkAuditFlags(fl auditFlags) error {
	for _, d := range fl.filter.Decisions {
		if d != "allowed" && d != "blocked" && d != "reported" {
			return fmt.Errorf("-decision: %q is not one of allowed, blocked, reported", d)
		}
	}
	for _, k := range fl.filter.Kinds {
		if !slices.Contains(auditKinds, k) {
			return fmt.Errorf("-kind: %q is not one of %s", k, strings.Join(auditKinds, ", "))
		}
	}
	known := auditReasons()
	for _, r := range fl.filter.Reasons {
		if !slices.Contains(known, r) {
			return fmt.Errorf("-reason: %q is not a reason robotsgate records%s (reasons: %s)", r, config.Suggest(r, known), strings.Join(known, ", "))
		}
	}
	for _, f := range fl.files {
		if strings.HasPrefix(f, "-") && f != "-" {
			return fmt.Errorf("flags must precede files: %q comes after a file", f)
		}
	}
	switch {
	case fl.top < 1:
		return errors.New("-top must be at least 1")
	case fl.follow && fl.summary:
		return errors.New("-f and -summary cannot be combined")
	case fl.follow && (len(fl.files) > 1 || len(fl.files) == 1 && fl.files[0] == "-"):
		return errors.New("-f follows one audit file, not standard input")
	}
	return nil
}

// parseWhen parses a -since/-until value: "" is none, a duration is that
// long before now, else an RFC 3339 time.
func parseWhen(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: want a positive duration", v)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (1h, 30m) nor an RFC 3339 time (2006-01-02T15:04:05Z)", v)
	}
	return t, nil
}

// auditFail prints one line on stderr and returns code.
func auditFail(stderr io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, "robotsgate audit: "+format+"\n", a...)
	return code
}
