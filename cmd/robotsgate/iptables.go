package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
)

// chain is the chain robotsgate's rules live in, in the nat table (the
// redirect) and in the filter table (QUIC refused); applying flushes and
// refills it, so that applying twice leaves one copy.
const chain = "ROBOTSGATE"

// iptablesOpts are the flags of `robotsgate iptables`.
type iptablesOpts struct {
	apply, remove bool
	ports         string // "80,443" or "all"
	uid           int
	toPort        int
	skipDst       string // comma-separated CIDRs never redirected; "-" = none
	ipv6          bool
}

// family is one of the two rule sets: IPv4 or IPv6.
type family struct {
	name, restore, save string
	loopback            string // the loopback destinations skipped with -ports all
}

var families = []family{
	{"IPv4", "iptables-restore", "iptables-save", "127.0.0.0/8"},
	{"IPv6", "ip6tables-restore", "ip6tables-save", "::1/128"},
}

// iptablesUsage is the usage line of "robotsgate iptables".
const iptablesUsage = "usage: robotsgate iptables [-apply | -remove] [-ports 80,443|all] [-uid N] [-to-port N] [-skip-dst CIDRs] [-ipv6=false]"

// runIPTables prints, applies or removes the redirect rules of the
// transparent listener (docs/transparent.md).
func runIPTables(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iptables", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o iptablesOpts
	fs.BoolVar(&o.apply, "apply", false, "apply the rules (root or CAP_NET_ADMIN); default: print them")
	fs.BoolVar(&o.remove, "remove", false, "remove the rules")
	fs.StringVar(&o.ports, "ports", "80,443", "comma-separated TCP `ports` (or ranges low:high) redirected, or all")
	fs.IntVar(&o.uid, "uid", 65532, "`uid` robotsgate runs as: its own connections are never redirected")
	fs.IntVar(&o.toPort, "to-port", 15001, "the transparent listener's `port` (transparent.listen)")
	fs.StringVar(&o.skipDst, "skip-dst", "", "comma-separated destination `CIDRs` never redirected; default: none, or loopback with -ports all; - for none")
	fs.BoolVar(&o.ipv6, "ipv6", true, "also write the IPv6 rules (skipped on a host without IPv6)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, iptablesUsage, fs)
			return 0
		}
		fmt.Fprintf(stderr, "robotsgate iptables: %v (%s)\n", config.FlagHint(fs, err), iptablesUsage)
		return 2
	}
	if fs.NArg() > 0 || (o.apply && o.remove) {
		fmt.Fprintln(stderr, "robotsgate iptables: "+iptablesUsage)
		return 2
	}
	if err := o.run(stdout); err != nil {
		fmt.Fprintln(stderr, "robotsgate iptables:", err)
		return 1
	}
	return 0
}

// run prints, applies or removes the rules of every family.
func (o iptablesOpts) run(stdout io.Writer) error {
	if o.uid < 0 || o.toPort < 1 || o.toPort > 65535 {
		return fmt.Errorf("-uid %d / -to-port %d out of range", o.uid, o.toPort)
	}
	for _, f := range families {
		if f.name == "IPv6" && (!o.ipv6 || !hasIPv6()) {
			fmt.Fprintln(stdout, "# IPv6: skipped (disabled, or no IPv6 on this host)")
			continue
		}
		ports, err := o.portMatches()
		if err != nil {
			return err
		}
		skip, err := o.skipped(f)
		if err != nil {
			return err
		}
		if !o.apply && !o.remove {
			fmt.Fprintf(stdout, "# %s: %s --noflush <<'EOF'\n%sEOF\n", f.name, f.restore, o.rules(f, ports, skip, nil))
			continue
		}
		if err := canApply(f); err != nil {
			return err
		}
		saved, err := exec.Command(f.save).Output()
		if err != nil {
			return fmt.Errorf("%s: %s failed: %w", f.name, f.save, err)
		}
		in := o.rules(f, ports, skip, saved)
		if o.remove {
			in = removal(saved)
		}
		cmd := exec.Command(f.restore, "--noflush")
		cmd.Stdin = strings.NewReader(in)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %s --noflush failed: %w: %s\ninput:\n%s", f.name, f.restore, err, bytes.TrimSpace(out), in)
		}
		verb := "applied"
		if o.remove {
			verb = "removed"
		}
		fmt.Fprintf(stdout, "# %s: %s\n%s", f.name, verb, in)
	}
	return nil
}

// portMatches returns the iptables port match of -ports: "" for all.
func (o iptablesOpts) portMatches() (string, error) {
	if o.ports == "all" {
		return "", nil
	}
	var ps []string
	slots := 0 // multiport counts a range as two ports
	for _, p := range strings.Split(o.ports, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(p), ":")
		a, aok := portNumber(lo)
		b, bok := portNumber(hi)
		switch {
		case !aok || isRange && (!bok || b <= a):
			return "", fmt.Errorf("-ports %q: %q is not a port or a range low:high (or use all)", o.ports, p)
		case isRange:
			ps, slots = append(ps, strconv.Itoa(a)+":"+strconv.Itoa(b)), slots+2
		default:
			ps, slots = append(ps, strconv.Itoa(a)), slots+1
		}
	}
	if slots > 15 {
		return "", errors.New("-ports: at most 15 ports, a range counting as two (multiport's limit); use all")
	}
	return "-m multiport --dports " + strings.Join(ps, ","), nil
}

// portNumber parses a TCP port, 1 to 65535.
func portNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 65535
}

// skipped returns the destination CIDRs of family f never redirected.
func (o iptablesOpts) skipped(f family) ([]string, error) {
	list := o.skipDst
	switch {
	case list == "-":
		return nil, nil
	case list == "" && o.ports == "all":
		return []string{f.loopback}, nil
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("-skip-dst: %q is not a CIDR or address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4() == (f.name == "IPv4") {
			out = append(out, p.Masked().String())
		}
	}
	return out, nil
}

// rules is the iptables-restore input of family f: the chain declared
// (which empties it) and filled, and the jumps to it added unless saved
// (iptables-save's output) already has them.
func (o iptablesOpts) rules(f family, ports string, skip []string, saved []byte) string {
	var b strings.Builder
	uid := strconv.Itoa(o.uid)
	b.WriteString("*nat\n:" + chain + " - [0:0]\n")
	if !hasJump(saved, "nat", "-A OUTPUT -p tcp -j "+chain) {
		b.WriteString("-I OUTPUT -p tcp -j " + chain + "\n")
	}
	b.WriteString("-A " + chain + " -m owner --uid-owner " + uid + " -j RETURN\n")
	for _, s := range skip {
		b.WriteString("-A " + chain + " -d " + s + " -j RETURN\n")
	}
	if ports == "" { // never the listener itself
		b.WriteString("-A " + chain + " -p tcp --dport " + strconv.Itoa(o.toPort) + " -j RETURN\n")
	}
	b.WriteString(strings.TrimSpace("-A "+chain+" -p tcp "+ports) + " -j REDIRECT --to-ports " + strconv.Itoa(o.toPort) + "\nCOMMIT\n")
	b.WriteString("*filter\n:" + chain + " - [0:0]\n")
	if !hasJump(saved, "filter", "-A OUTPUT -p udp -j "+chain) {
		b.WriteString("-I OUTPUT -p udp -j " + chain + "\n")
	}
	b.WriteString("-A " + chain + " -p udp --dport 443 -j REJECT\nCOMMIT\n")
	return b.String()
}

// removal is the iptables-restore input that deletes the jumps saved
// holds and the chains.
func removal(saved []byte) string {
	var b strings.Builder
	for _, t := range []struct{ table, jump string }{{"nat", "-A OUTPUT -p tcp -j " + chain}, {"filter", "-A OUTPUT -p udp -j " + chain}} {
		if !hasTable(saved, t.table, ":"+chain+" ") {
			continue
		}
		b.WriteString("*" + t.table + "\n")
		for range countJumps(saved, t.table, t.jump) {
			b.WriteString("-D" + strings.TrimPrefix(t.jump, "-A") + "\n")
		}
		b.WriteString("-F " + chain + "\n-X " + chain + "\nCOMMIT\n")
	}
	return b.String()
}

// hasJump reports whether saved has line in table.
func hasJump(saved []byte, table, line string) bool { return countJumps(saved, table, line) > 0 }

// hasTable reports whether table in saved has a line starting with prefix.
func hasTable(saved []byte, table, prefix string) bool {
	found := false
	eachLine(saved, table, func(l string) { found = found || strings.HasPrefix(l, prefix) })
	return found
}

// countJumps counts line in table in saved.
func countJumps(saved []byte, table, line string) int {
	n := 0
	eachLine(saved, table, func(l string) {
		if l == line {
			n++
		}
	})
	return n
}

// eachLine calls fn with each line of table in iptables-save's output.
func eachLine(saved []byte, table string, fn func(string)) {
	in := false
	sc := bufio.NewScanner(bytes.NewReader(saved))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "*"):
			in = l == "*"+table
		case in:
			fn(l)
		}
	}
}

// canApply says clearly why the rules cannot be applied: no iptables, or
// neither root nor CAP_NET_ADMIN.
func canApply(f family) error {
	for _, bin := range []string{f.restore, f.save} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s: %s not found in PATH: install iptables (the robotsgate-iptables image has it)", f.name, bin)
		}
	}
	if os.Geteuid() != 0 && !hasNetAdmin() {
		return fmt.Errorf("changing the rules needs root or CAP_NET_ADMIN (uid %d has neither); run it as root in an init container with NET_ADMIN", os.Geteuid())
	}
	return nil
}

// hasNetAdmin reports whether the process has CAP_NET_ADMIN (bit 12 of
// CapEff in /proc/self/status).
func hasNetAdmin() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<12) != 0
		}
	}
	return false
}

// hasIPv6 reports whether the host has IPv6.
func hasIPv6() bool {
	_, err := os.Stat("/proc/net/if_inet6")
	return err == nil
}
