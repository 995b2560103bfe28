package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/proxy"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

const checkFetchUsage = "usage: robotsgate check -fetch [-config FILE] [-agent NAME] [-purpose LIST|none] [-content-use LEVEL|none] [-upstream-roots FILES] [-json] [-parallel N] [URL...] (no URL: one per line on standard input)"

// checkFetchParallel is how many URLs "check -fetch" decides at once by
// default.
const checkFetchParallel = 8

// isFetchFlag reports whether arg is check's -fetch flag.
func isFetchFlag(arg string) bool {
	switch arg {
	case "-fetch", "--fetch", "-fetch=true", "--fetch=true":
		return true
	}
	return false
}

// checkFetchFlags are the parsed flags of "check -fetch".
type checkFetchFlags struct {
	cfg      config.Config
	agent    string
	purposes aipref.Set
	use      aipref.Use
	asJSON   bool
	parallel int
	urls     []string
}

// runCheckFetch implements "robotsgate check -fetch": for each URL (the
// arguments, else the lines of stdin) it decides as the proxy would now,
// with the proxy's own robots.txt fetcher and policy ([enforce.Enforcer])
// built from the configuration (-config, the environment): the same
// status rules, decoding, spellings, agent, purposes, content use and
// per-site exceptions. Each origin's
// robots.txt is fetched once. It prints one verdict per URL (text, or
// with -json the answer of GET /v1/decision) in input order, then a
// summary (on stderr with -json). Exit status: 0 when every URL is
// allowed, 1 when any is refused, 2 on a usage or configuration error.
func runCheckFetch(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl, code := parseCheckFetch(args, env, stdin, stdout, stderr)
	if code >= 0 {
		return code
	}
	tr, err := proxy.NewPolicyTransport(fl.cfg) // the transport serve fetches robots.txt with
	if err != nil {
		return checkFetchFail(stderr, "%v", err)
	}
	defer tr.CloseIdleConnections()
	sig, err := proxy.NewFetchSigner(fl.cfg) // signed with signing.key, as serve signs its fetches
	if err != nil {
		return checkFetchFail(stderr, "%v", err)
	}
	store := enforce.NewMemoryStore(fl.cfg.Robots.MaxEntries, int64(fl.cfg.Robots.MaxCacheMB)<<20)
	enf, err := enforce.New(proxy.EnforceConfig(fl.cfg, sig.Transport(tr), store, proxy.NewMetrics(), zerolog.Nop()))
	if err != nil {
		return checkFetchFail(stderr, "%v", err)
	}
	defer enf.Close()
	vp := newVerdictPrinter(fl, stdout)
	// Decided and printed in batches: the output starts before a long
	// list is done, in input order.
	for start := 0; start < len(fl.urls); start += checkFetchBatch {
		batch := fl.urls[start:min(start+checkFetchBatch, len(fl.urls))]
		if err := vp.print(decideAll(ctx, enf, batch, fl)); err != nil {
			return checkFetchFail(stderr, "write: %v", err)
		}
	}
	return vp.finish(stderr)
}

// checkFetchBatch is how many URLs "check -fetch" decides before it
// prints their verdicts.
const checkFetchBatch = 256

// parseCheckFetch parses args and reads the URLs; code is -1 when the
// command is to run, else its exit status.
func parseCheckFetch(args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) (checkFetchFlags, int) {
	var fl checkFetchFlags
	fs := flag.NewFlagSet("check -fetch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("fetch", true, "fetch each origin's robots.txt, as the proxy does, instead of reading -robots")
	configFile := fs.String("config", "", "configuration `file` (as serve's -config; the environment applies too): agent, purposes, robots.* and https.upstream_roots")
	agent := fs.String("agent", "", "product token `NAME` of the crawler (default: the configured agent)")
	purposeList := fs.String("purpose", "", "comma-separated `LIST` of purposes, or none (default: the configured purposes)")
	useName := fs.String("content-use", "", "content use `LEVEL` ("+aipref.UseList+"), or none (default: the configured content_use)")
	fs.BoolVar(&fl.asJSON, "json", false, "print one JSON object per URL, as GET /v1/decision answers")
	fs.IntVar(&fl.parallel, "parallel", checkFetchParallel, "how many URLs to decide at once")
	roots := fs.String("upstream-roots", "", "comma-separated PEM `FILES` of root CAs trusted for origins' certificates, besides the system's (as serve's -upstream-roots, https.upstream_roots)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, checkFetchUsage, fs)
			return fl, 0
		}
		return fl, checkFetchFail(stderr, "%v (%s)", config.FlagHint(fs, err), checkFetchUsage)
	}
	var cargs []string
	if *configFile != "" {
		cargs = []string{"-config", *configFile}
	}
	if *roots != "" {
		cargs = append(cargs, "-upstream-roots", *roots)
	}
	cfg, err := config.Load(cargs, env)
	if err != nil {
		return fl, checkFetchFail(stderr, "%v", err)
	}
	fl.cfg, fl.agent, fl.purposes, fl.use = cfg, fetchAgent(*agent, cfg.Agent, stderr), cfg.Purposes, cfg.ContentUse
	if fl.purposes, err = checkPurposes(*purposeList, fl.purposes); err != nil {
		return fl, checkFetchFail(stderr, "-purpose: %v", err)
	}
	switch *useName {
	case "":
	case "none":
		fl.use = aipref.UseUnknown
	default:
		if fl.use, err = aipref.ParseUse(*useName); err != nil {
			return fl, checkFetchFail(stderr, "-content-use: %v", err)
		}
	}
	if fl.urls, err = checkURLs(fs.Args(), stdin); err != nil {
		return fl, checkFetchFail(stderr, "%v", err)
	}
	switch {
	case fl.agent == "" && *agent == "":
		return fl, checkFetchFail(stderr, "no agent: give -agent or configure agent (%s)", checkFetchUsage)
	case len(fl.urls) == 0:
		return fl, checkFetchFail(stderr, "no URL given (%s)", checkFetchUsage)
	case fl.parallel < 1:
		return fl, checkFetchFail(stderr, "-parallel must be at least 1")
	}
	return fl, -1
}

// fetchAgent is the agent of "check -fetch": the -agent value v read as
// the proxy reads a User-Agent (a token, or a whole User-Agent; a note
// when it names no crawler), else the configured agent.
func fetchAgent(v, configured string, stderr io.Writer) string {
	if v == "" {
		return configured
	}
	agent := robots.CrawlerToken(v)
	if agent == "" {
		fmt.Fprintf(stderr, "robotsgate check: note: -agent %q names no crawler (a browser's User-Agent, or no product token), so only the * group applies, as in the proxy\n", v)
	}
	return agent
}

// checkPurposes parses -purpose: "" keeps configured, "none" is none.
func checkPurposes(v string, configured aipref.Set) (aipref.Set, error) {
	switch v {
	case "":
		return configured, nil
	case "none":
		return 0, nil
	}
	return aipref.ParsePurposes([]string{v})
}

// checkURLs returns args, or the lines of stdin when there is none
// (blank lines and lines starting with # skipped). A flag among the URLs
// is an error.
func checkURLs(args []string, stdin io.Reader) ([]string, error) {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return nil, fmt.Errorf("flags must precede URLs: %q comes after a URL", a)
		}
	}
	if len(args) > 0 {
		return args, nil
	}
	var urls []string
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			urls = append(urls, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read URLs from standard input: %w", err)
	}
	return urls, nil
}

// decideAll decides urls, fl.parallel at a time; the results are in
// input order.
func decideAll(ctx context.Context, enf *enforce.Enforcer, urls []string, fl checkFetchFlags) []enforce.Decision {
	ds := make([]enforce.Decision, len(urls))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(fl.parallel, len(urls)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ds[i] = decideOne(ctx, enf, urls[i], fl)
			}
		}()
	}
	for i := range urls {
		next <- i
	}
	close(next)
	wg.Wait()
	return ds
}

// decideOne decides raw as the proxy would: only absolute http and https
// URLs can be proxied, anything else is refused as invalid-url.
func decideOne(ctx context.Context, enf *enforce.Enforcer, raw string, fl checkFetchFlags) enforce.Decision {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "http" && u.Scheme != "https" {
		err = errors.New("want an absolute http or https URL")
	}
	if err != nil {
		return enforce.Decision{Reason: enforce.ReasonInvalidURL, URL: raw, Agent: fl.agent, Purposes: fl.purposes, ContentUse: fl.use, Detail: err.Error()}
	}
	// The operator's per-site exceptions (sites:) apply as in the proxy.
	d := proxy.DecideWithSites(ctx, enf, fl.cfg.Sites, u, fl.agent, enforce.DecideOptions{Purposes: fl.purposes, ContentUse: fl.use, Quiet: true,
		UnknownDeny: fl.cfg.Usage.Unknown == config.UsageUnknownDeny})
	// This command fetches once: a running proxy's retry does not apply.
	if detail, _, ok := strings.Cut(d.Detail, enforce.RetryClause); ok {
		d.Detail = detail + "; this command fetches robots.txt once: run it again later to retry"
	}
	return d
}

// verdictPrinter prints verdicts and counts them for the summary.
type verdictPrinter struct {
	fl      checkFetchFlags
	w       *bufio.Writer
	enc     *json.Encoder
	n       int
	refused map[string]int
	origins map[string]bool
}

func newVerdictPrinter(fl checkFetchFlags, stdout io.Writer) *verdictPrinter {
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(safetext.Writer(w))
	enc.SetEscapeHTML(false)
	return &verdictPrinter{fl: fl, w: w, enc: enc, refused: map[string]int{}, origins: map[string]bool{}}
}

// print prints the verdicts ds, text or JSON, and flushes them.
func (vp *verdictPrinter) print(ds []enforce.Decision) error {
	for i := range ds {
		d := &ds[i]
		vp.n++
		if !d.Allowed {
			vp.refused[string(d.Reason)]++
		}
		if d.Origin != "" {
			vp.origins[d.Origin] = true
		}
		if vp.fl.asJSON {
			_ = vp.enc.Encode(answer.NewDecisionJSON(*d))
		} else {
			vp.w.WriteString(fetchLine(d))
		}
	}
	return vp.w.Flush()
}

// finish prints the summary (on stderr with -json) and returns the exit
// status: 1 when a URL was refused.
func (vp *verdictPrinter) finish(stderr io.Writer) int {
	sum := fetchSummary(vp.n, len(vp.origins), vp.refused, cmp.Or(vp.fl.agent, "*"))
	if vp.fl.asJSON {
		fmt.Fprint(stderr, sum)
	} else {
		vp.w.WriteString("\n" + sum)
	}
	if err := vp.w.Flush(); err != nil {
		return checkFetchFail(stderr, "write: %v", err)
	}
	if len(vp.refused) > 0 {
		return 1
	}
	return 0
}

// fetchLine is the text line of one decision: "allowed" or the reason of
// the refusal, the URL, the deciding rule and line, the detail.
func fetchLine(d *enforce.Decision) string {
	var why []string
	if d.Rule != "" {
		r := d.Rule
		if d.Line > 0 {
			r += fmt.Sprintf(", line %d", d.Line)
		}
		why = append(why, r)
	}
	if d.Reason == enforce.ReasonOriginUnreachable && d.RobotsErrKind == enforce.FetchTLSUntrusted {
		// What the proxy's 502 says, and this command's own flag.
		why = append(why, answer.Explain(*d)+" (here: -upstream-roots FILE)")
	}
	if d.Detail != "" {
		why = append(why, d.Detail)
	}
	verdict := string(d.Reason)
	if d.Allowed {
		verdict = "allowed" // also for robots-unavailable, which the detail explains
	}
	l := fmt.Sprintf("%-18s %s", verdict, d.URL)
	if len(why) > 0 {
		l += "  (" + strings.Join(why, "; ") + ")"
	}
	return printable(l) + "\n" // rules and details come from remote files and servers
}

// fetchSummary is the last line(s): counts of URLs, origins and refusals
// by reason.
func fetchSummary(urls, origins int, refused map[string]int, agent string) string {
	n := 0
	reasons := make([]string, 0, len(refused))
	for r, c := range refused {
		n += c
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	s := fmt.Sprintf("%d %s of %d %s checked for %s: %d allowed, %d refused", urls, plural(urls, "URL", "URLs"),
		origins, plural(origins, "origin", "origins"), agent, urls-n, n)
	for i, r := range reasons {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		s += fmt.Sprintf("%s%s %d", sep, r, refused[r])
	}
	if len(reasons) > 0 {
		s += ")"
	}
	return s + "\n"
}

// checkFetchFail prints one line on stderr and returns 2.
func checkFetchFail(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "robotsgate check: "+format+"\n", a...)
	return 2
}
