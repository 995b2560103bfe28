package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/robotsgate/robotsgate/robots"
)

const checkUsage = "usage: robotsgate check -robots FILE -agent NAME [-json] URL..."

// runCheck implements "robotsgate check": it reads a robots.txt and prints,
// for each URL, whether the crawler named by -agent may fetch it. The exit
// status is 0 when every URL is allowed, 1 when any is disallowed and 2 on
// a usage or read error (reported in one line on stderr). Flags must
// precede the URLs. A one-line "note:" on stderr, which does not change
// the exit status, says when the file exceeds what robots.Parse reads or
// when -agent is not a product token.
func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("robots", "", "robots.txt `FILE` to read; - reads standard input")
	agent := fs.String("agent", "", "product token `NAME` of the crawler, compared whole and case-insensitively")
	asJSON := fs.Bool("json", false, "print one JSON object per URL")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "robotsgate check: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, checkUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return fail("%v (%s)", err, checkUsage)
	}
	switch {
	case *file == "":
		return fail("-robots is required (%s)", checkUsage)
	case *agent == "":
		return fail("-agent is required (%s)", checkUsage)
	case fs.NArg() == 0:
		return fail("no URL given (%s)", checkUsage)
	}
	// The flag package stops at the first URL: a flag after it would be
	// checked as a URL.
	for _, u := range fs.Args() {
		if strings.HasPrefix(u, "-") {
			return fail("flags must precede URLs: %q comes after a URL (%s)", u, checkUsage)
		}
	}
	body, err := readRobots(*file, stdin)
	if err != nil {
		return fail("%v", err)
	}
	if len(body) > robots.DefaultMaxBytes {
		fmt.Fprintf(stderr, "robotsgate check: note: the robots.txt is larger than %d bytes; only the lines within them are parsed\n", robots.DefaultMaxBytes)
	}
	if !robots.ValidAgent(*agent) {
		fmt.Fprintf(stderr, "robotsgate check: note: -agent %q is not a product token ([A-Za-z0-9_-]+), so only the * group can apply to it (product token: %q)\n", *agent, robots.ProductToken(*agent))
	}
	r := robots.Parse(body)

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	status := 0
	for _, u := range fs.Args() {
		d := r.Decide(*agent, u)
		if !d.Allowed {
			status = 1
		}
		if *asJSON {
			out := checkResult{URL: u, Allowed: d.Allowed}
			if d.Rule.Line > 0 {
				out.Rule, out.Line = d.Rule.String(), d.Rule.Line
			}
			if err := enc.Encode(out); err != nil {
				return fail("write: %v", err)
			}
			continue
		}
		var err error
		if d.Allowed {
			_, err = fmt.Fprintf(stdout, "allowed %s\n", u)
		} else {
			_, err = fmt.Fprintf(stdout, "disallowed %s  (%s, line %d)\n", u, d.Rule, d.Rule.Line)
		}
		if err != nil {
			return fail("write: %v", err)
		}
	}
	return status
}

// checkResult is one line of "robotsgate check -json".
type checkResult struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"` // "" when no rule matched
	Line    int    `json:"line"` // 0 when no rule matched
}

// readRobots reads the robots.txt named by file ("-" for stdin), up to one
// byte more than robots.Parse looks at.
func readRobots(file string, stdin io.Reader) ([]byte, error) {
	var src io.Reader = stdin
	name := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read robots.txt: %w", err)
		}
		defer f.Close()
		src, name = f, file
	}
	b, err := io.ReadAll(io.LimitReader(src, robots.DefaultMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read robots.txt from %s: %w", name, err)
	}
	return b, nil
}
