// Command robotsgate is an HTTP(S) forward proxy that makes any scraper
// obey robots.txt (RFC 9309).
//
// Usage:
//
//	robotsgate [serve] [flags]   run the proxy (default; 127.0.0.1:9309)
//	robotsgate check [flags]     test URLs against a robots.txt
//	robotsgate audit [flags]     query the audit log
//	robotsgate reload [flags]    make the configured instance reload its configuration
//	robotsgate ca [flags]        show or create the MITM CA certificate
//	robotsgate health [flags]    exit 0 if the configured robotsgate answers /healthz
//	robotsgate iptables [flags]  print (or -apply, -remove) the rules of the transparent sidecar
//	robotsgate signing ...       Web Bot Auth keys: generate FILE, directory
//	robotsgate version           print the version, commit and Go version
//
// Run "robotsgate -h" or "robotsgate <command> -h" for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/robotsgate/robotsgate/internal/config"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext returns a context that ends at the first SIGINT or
// SIGTERM. From then on the signals have their default effect again, so
// that a second Ctrl-C during the graceful stop kills the process.
// The returned context is done only once the default is back.
func signalContext() (context.Context, context.CancelFunc) {
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(sig, func() {
		stop()
		cancel()
	})
	return ctx, func() {
		stop()
		cancel()
	}
}

// run dispatches to a subcommand and returns the exit code: serve when
// args is empty or starts with a flag, else the named one.
func run(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelp(args[0]) {
			usage(stdout)
			return 0
		}
		if len(args) > 0 && (args[0] == "-version" || args[0] == "--version") {
			return runVersion(stdout)
		}
		return runServe(ctx, args, env, stdout, stderr, nil)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], env, stdout, stderr, nil)
	case "check":
		if slices.ContainsFunc(args[1:], isFetchFlag) {
			return runCheckFetch(ctx, args[1:], env, stdin, stdout, stderr) // checkfetch.go
		}
		return runCheck(args[1:], stdin, stdout, stderr)
	case "audit":
		return runAudit(ctx, args[1:], env, stdin, stdout, stderr, auditEnv{now: time.Now})
	case "report": // the crawl report of the volume records (report.go)
		return runReport(ctx, args[1:], env, stdin, stdout, stderr, time.Now())
	case "publish": // the crawler's information page, key directory and agent cards (publish.go)
		return runPublish(args[1:], env, stdout, stderr)
	case "ca":
		return runCA(args[1:], stdout, stderr)
	case "reload": // ask one instance to reload its configuration (reloadcmd.go)
		return runReload(ctx, args[1:], env, stdout, stderr)
	case "health": // the container HEALTHCHECK (health.go)
		return runHealth(ctx, args[1:], env, stdout, stderr)
	case "iptables": // the transparent listener's redirect rules (iptables.go)
		return runIPTables(args[1:], stdout, stderr)
	case "signing": // Web Bot Auth keys and key directory (signing.go)
		return runSigning(args[1:], env, stdout, stderr)
	case "version":
		switch {
		case len(args) > 1 && isHelp(args[1]):
			fmt.Fprintln(stdout, "usage: robotsgate version (prints the version, commit and Go version; takes no flags)")
			return 0
		case len(args) > 1:
			fmt.Fprintf(stderr, "robotsgate version: unexpected argument %q: version takes no flags or arguments\n", args[1])
			return 2
		}
		return runVersion(stdout)
	case "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "robotsgate: unknown command %q (want serve, check, audit, report, publish, reload, ca, health, iptables, signing or version; -h for help)\n", args[0])
		return 2
	}
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// printHelp answers a subcommand's -h: its usage line, then the flags of
// fs.
func printHelp(stdout io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprintln(stdout, usage)
	fs.SetOutput(stdout)
	fs.PrintDefaults()
}

// usage prints the overview and the serve flags.
func usage(w io.Writer) {
	fmt.Fprint(w, `robotsgate: an HTTP(S) forward proxy that makes any scraper obey robots.txt (RFC 9309)

Usage:
  robotsgate [serve] [flags]   run the proxy (default; listens on 127.0.0.1:9309)
  robotsgate check [flags]     test URLs against a robots.txt (-fetch: the live robots.txt files)
  robotsgate audit [flags]     query the audit log (blocked URLs of an origin, counts, -f to follow)
  robotsgate report [flags]    crawl report: volume per origin, refusals, opt-outs (-format table|csv|json|html)
  robotsgate publish -out DIR  write the crawler information page, key directory and Signature Agent Cards
  robotsgate reload [flags]    make the configured instance read its configuration again (admin API)
  robotsgate ca [flags]        show or create the MITM CA certificate
  robotsgate health [flags]    exit 0 if the configured robotsgate answers /healthz (container HEALTHCHECK)
  robotsgate iptables [flags]  print (or -apply, -remove) the rules of the transparent sidecar
  robotsgate signing ...       Web Bot Auth: generate FILE (a new key), directory (print the key directory)
  robotsgate version           print the version, commit and Go version (also -version)

Run "robotsgate <command> -h" for a command's flags. Flags of serve:
`)
	config.PrintFlags(w)
}
