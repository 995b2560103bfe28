package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

const checkUsage = "usage: robotsgate check -robots FILE -agent NAME [-purpose LIST] [-content-use LEVEL] [-config FILE] [-tdmrep FILE] [-json] URL... | robotsgate check -tdmrep FILE [-json] URL... | robotsgate check -license FILE -purpose LIST [-json] URL... | robotsgate check -fetch [flags] [URL...] (the live robots.txt files, fetched as the proxy does: check -fetch -h)"

// runCheck implements "robotsgate check": it reads a robots.txt and prints,
// for each URL, whether the crawler named by -agent may fetch it, decided
// as the proxy decides ([enforce.RulesVerdict]: the path and the other
// spellings an origin may read it as, then the usage preferences for the
// purposes of -purpose and the content-use level for -content-use),
// with the deciding rule and line. The exit
// status is 0 when every URL is allowed, 1 when any is disallowed (by a
// rule or by a usage preference) and 2 on
// a usage or read error (reported in one line on stderr). Flags must
// precede the URLs. A one-line "note:" on stderr, which does not change
// the exit status, says when the file exceeds what [robots.Parse] reads or
// when -agent is not a product token.
func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("robots", "", "robots.txt `FILE` to read; - reads standard input")
	agent := fs.String("agent", "", "the crawler: its product token `NAME`, or a whole User-Agent, read as the proxy reads one (\"Mozilla/5.0 (compatible; MJ12bot/v1.4.8)\" is MJ12bot)")
	asJSON := fs.Bool("json", false, "print one JSON object per URL")
	tdmFile := fs.String("tdmrep", "", "tdmrep.json `FILE` to check the URLs against (W3C TDMRep; alone, or with -robots)")
	licFile := fs.String("license", "", "RSL license `FILE` to check the URLs against for the -purpose uses (alone, or with -robots)")
	confFile := fs.String("config", "", "YAML configuration `FILE` whose per-site exceptions (sites:) apply, as in the proxy")
	purposeList := fs.String("purpose", "", "comma-separated `LIST` of the crawler's purposes ("+aipref.PurposeList+"): a URL whose usage preferences disallow one is disallowed")
	useName := fs.String("content-use", "", "the crawler's content use, `LEVEL` "+aipref.UseList+": a URL whose Content-Signal use= is lower is disallowed")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "robotsgate check: "+format+"\n", a...)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, checkUsage, fs)
			fmt.Fprintln(stdout, "  -fetch\n    \tfetch each origin's robots.txt as the proxy does, instead of reading -robots (its flags: check -fetch -h)")
			return 0
		}
		return fail("%v (%s)", config.FlagHint(fs, err), checkUsage)
	}
	switch {
	case *file == "" && *tdmFile != "" && fs.NArg() > 0:
		return checkTDMRep(*tdmFile, fs.Args(), *asJSON, stdin, stdout, stderr) // check_tdmrep.go
	case *file == "" && *licFile != "" && fs.NArg() > 0:
		return checkLicense(*licFile, *purposeList, fs.Args(), *asJSON, stdin, stdout, stderr) // check_license.go
	case *file == "":
		return fail("-robots is required, or -fetch to fetch the live robots.txt files (%s)", checkUsage)
	case *agent == "":
		return fail("-agent is required (%s)", checkUsage)
	case fs.NArg() == 0:
		return fail("no URL given (%s)", checkUsage)
	}
	if err := flagAfterURL(fs.Args()); err != nil {
		return fail("%v", err)
	}
	pol, err := checkPolicy(*purposeList, *useName)
	if err != nil {
		return fail("%v", err)
	}
	sites, err := checkSites(*confFile) // (checksites.go)
	if err != nil {
		return fail("-config: %v", err)
	}
	body, err := readInput(*file, "robots.txt", stdin)
	if err != nil {
		return fail("%v", err)
	}
	token := robots.CrawlerToken(*agent) // as the proxy reads a User-Agent
	checkNotes(stderr, len(body), *agent, token)
	status, err := writeVerdicts(stdout, robots.Parse(body), token, fs.Args(), pol, sites, *asJSON)
	if err != nil {
		return fail("write: %v", err)
	}
	return max(status, checkFiles(*tdmFile, *licFile, *purposeList, fs.Args(), *asJSON, stdin, stdout, stderr))
}

// writeVerdicts writes the verdict of r for agent and pol, with the per-site
// exceptions sites, on each of urls to w, as JSON objects or text lines,
// and returns the exit status: 1 when any is disallowed, 0 otherwise;
// the error is w's.
func writeVerdicts(w io.Writer, r *robots.Robots, agent string, urls []string, pol enforce.UsagePolicy, sites []config.Site, asJSON bool) (int, error) {
	enc := json.NewEncoder(safetext.Writer(w))
	enc.SetEscapeHTML(false)
	status := 0
	for _, u := range urls {
		v, site := checkDecide(r, agent, u, pol, sites)
		if !v.Allowed {
			status = 1
		}
		var err error
		if asJSON {
			err = enc.Encode(newCheckResult(u, &v, pol).withSite(site))
		} else {
			_, err = io.WriteString(w, printable(checkLine(u, &v, pol.Purposes, site))+"\n")
		}
		if err != nil {
			return status, err
		}
	}
	return status, nil
}

// flagAfterURL returns the error of a flag among urls: the flag package
// stops at the first URL, so a flag after it would be checked as a URL.
func flagAfterURL(urls []string) error {
	for _, u := range urls {
		if strings.HasPrefix(u, "-") {
			return fmt.Errorf("flags must precede URLs: %q comes after a URL (%s)", u, checkUsage)
		}
	}
	return nil
}

// checkNotes writes the notes of a robots.txt of size bytes and of the
// -agent value agent, read as token, on stderr: a file larger than
// [robots.Parse] reads, an agent read as another token or as none.
func checkNotes(stderr io.Writer, size int, agent, token string) {
	if size > robots.DefaultMaxBytes {
		fmt.Fprintf(stderr, "robotsgate check: note: the robots.txt is larger than %d bytes; only the lines within them are parsed\n", robots.DefaultMaxBytes)
	}
	switch {
	case token == "":
		fmt.Fprintf(stderr, "robotsgate check: note: -agent %q names no crawler (a browser's User-Agent, or no product token [A-Za-z0-9_-]+), so only the * group applies, as in the proxy\n", agent)
	case token != agent:
		fmt.Fprintf(stderr, "robotsgate check: note: -agent %q is read as a User-Agent, as the proxy reads one: agent %s\n", agent, token)
	}
}

// checkPolicy parses the -purpose and -content-use flags.
func checkPolicy(purposeList, useName string) (enforce.UsagePolicy, error) {
	purposes, err := aipref.ParsePurposes([]string{purposeList})
	if err != nil {
		return enforce.UsagePolicy{}, fmt.Errorf("-purpose: %w", err)
	}
	use, err := aipref.ParseUse(useName)
	if err != nil {
		return enforce.UsagePolicy{}, fmt.Errorf("-content-use: %w", err)
	}
	return enforce.UsagePolicy{Purposes: purposes, ContentUse: use}, nil
}

// checkLine is the text line of one URL: the verdict ("allowed",
// "disallowed" or "usage-disallowed"), the URL, the deciding rule and
// its line, the detail, and the usage preferences of the declared
// purposes (of the purposes with one, when none is declared), without
// its line feed.
func checkLine(u string, v *enforce.Verdict, purposes aipref.Set, site config.Site) string {
	var b strings.Builder
	switch v.Reason {
	case enforce.ReasonAllowed:
		b.WriteString("allowed ")
	case enforce.ReasonUsageDisallowed, answer.ReasonSiteDenied, answer.ReasonSiteException:
		b.WriteString(string(v.Reason) + " ")
	default:
		b.WriteString("disallowed ")
	}
	b.WriteString(u)
	var why []string
	if v.Line != 0 {
		why = append(why, fmt.Sprintf("%s, line %d", v.Rule, v.Line))
	}
	if v.Detail != "" {
		why = append(why, v.Detail)
	}
	if site.Match != "" {
		why = append(why, "site "+site.Match)
	}
	if len(why) > 0 {
		b.WriteString("  (" + strings.Join(why, "; ") + ")")
	}
	if v.Allowed {
		var us []string
		for p := aipref.Purpose(0); p < aipref.NumPurposes; p++ {
			uv := v.Usage.For(p)
			switch {
			case uv.Line != 0 && (purposes == 0 || purposes.Has(p)):
				us = append(us, fmt.Sprintf("%s %s (%s, line %d)", p, uv.Pref, uv.Rule, uv.Line))
			case purposes.Has(p):
				us = append(us, p.String()+" unknown")
			}
		}
		if len(us) > 0 {
			b.WriteString("  usage: " + strings.Join(us, "; "))
		}
	}
	if su := v.SiteUse; su.Level != aipref.UseUnknown {
		fmt.Fprintf(&b, "  use: %s (%s, line %d)", su.Level, su.Rule, su.Line)
	}
	return b.String()
}

// checkResult is one line of "robotsgate check -json".
type checkResult struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"` // "" when no rule matched
	Line    int    `json:"line"` // 0 when no rule matched
	// Reason is set when a usage preference refused the URL
	// ("usage-disallowed") or a per-site exception decided it
	// ("site-denied", "site-exception").
	Reason string `json:"reason,omitempty"`
	// Site is the per-site exception that applied (-config), SiteNote
	// its note.
	Site     string `json:"site,omitempty"`
	SiteNote string `json:"site_note,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Purposes are the declared purposes (-purpose); UsageDisallowed
	// those that refused the URL.
	Purposes        []string `json:"purposes,omitempty"`
	UsageDisallowed []string `json:"usage_disallowed,omitempty"`
	// Usage is the stated preference of every purpose that has one, and
	// of every declared purpose ("unknown" when none is stated).
	Usage map[string]enforce.PurposeUsage `json:"usage,omitempty"`
	// The declared content use (-content-use), the level the robots.txt
	// states for the URL, and whether that is below the declared one.
	enforce.ContentUseShown
}

func newCheckResult(u string, v *enforce.Verdict, pol enforce.UsagePolicy) checkResult {
	out := checkResult{URL: u, Allowed: v.Allowed, Rule: v.Rule, Line: v.Line, Detail: v.Detail,
		Purposes: pol.Purposes.Names(), UsageDisallowed: v.UsageBlocked.Names(),
		Usage:           v.Usage.Shown(pol.Purposes, v.Reason != enforce.ReasonDisallowed),
		ContentUseShown: enforce.ShowContentUse(pol.ContentUse, v.SiteUse, v.ContentUseBlocked)}
	if v.Reason != enforce.ReasonAllowed && v.Reason != enforce.ReasonDisallowed {
		out.Reason = string(v.Reason)
	}
	return out
}

// readInput reads the document what (robots.txt, tdmrep.json, license)
// named by file ("-" for stdin), up to one byte more than the proxy reads
// of one ([robots.DefaultMaxBytes]).
func readInput(file, what string, stdin io.Reader) ([]byte, error) {
	var src io.Reader = stdin
	name := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		defer f.Close()
		src, name = f, file
	}
	b, err := io.ReadAll(io.LimitReader(src, robots.DefaultMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", what, name, err)
	}
	return b, nil
}

// readWhole is [readInput] for a document that the proxy does not decide
// by when it is larger than it reads: such a file is an error, which says
// what is then unknown.
func readWhole(file, what, unknown string, stdin io.Reader) ([]byte, error) {
	b, err := readInput(file, what, stdin)
	if err == nil && len(b) > robots.DefaultMaxBytes {
		return nil, fmt.Errorf("%s %s is larger than %d bytes, which the proxy does not read (%s)", what, file, robots.DefaultMaxBytes, unknown)
	}
	return b, err
}
