package main

// Tests of the monitoring files under configs/: every metric and label
// that the Grafana dashboard and the Prometheus rules name must be on a
// real robotsgate's /metrics, so that a renamed metric breaks this test
// rather than silently emptying a panel or disarming an alert.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/robotsgate/robotsgate/internal/redistest"
)

// exposed maps each sample name on /metrics to the label values of its
// series: label name -> set of values.
type exposed map[string]map[string]map[string]bool

// targetLabels are added by Prometheus to every scraped series.
func targetLabels() []string { return []string{"instance", "job"} }

// scrapeRobotsgate starts robotsgate with a Redis cache and an audit log
// file, sends an allowed and a disallowed request through it and returns
// what its /metrics exposes.
func scrapeRobotsgate(t *testing.T) exposed {
	t.Helper()
	redis := redistest.Start(t)
	origin, _ := newTestOrigin(t, nil)
	r := startServe(t, []string{"-cache", redis.URL(0), "-audit-log", filepath.Join(t.TempDir(), "audit.jsonl")}, nil)
	r.getAll(t, origin.URL+"/page", origin.URL+"/private/x")
	return parseExposition(t, r.metrics(t))
}

// parseExposition reads the sample lines of the Prometheus text format.
func parseExposition(t *testing.T, text string) exposed {
	t.Helper()
	out := exposed{}
	labelRE := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if out[name] == nil {
			out[name] = map[string]map[string]bool{}
		}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				t.Fatalf("/metrics line %q", line)
			}
			for _, m := range labelRE.FindAllStringSubmatch(rest[:end], -1) {
				if out[name][m[1]] == nil {
					out[name][m[1]] = map[string]bool{}
				}
				out[name][m[1]][m[2]] = true
			}
		}
	}
	return out
}

// dashboardExprs returns the PromQL of every panel target and template
// variable of the Grafana dashboard, with Grafana's variables replaced.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs/grafana/robotsgate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Definition string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("robotsgate.json: %v", err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", `"$instance"`, `".*"`)
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, grafana.Replace(tg.Expr))
		}
	}
	lv := regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*), *([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	for _, v := range d.Templating.List {
		if m := lv.FindStringSubmatch(v.Definition); m != nil {
			exprs = append(exprs, m[1]+"{"+m[2]+`=~".+"}`)
		} else if v.Definition != "" {
			t.Errorf("template variable query %q: not label_values(metric, label)", v.Definition)
		}
	}
	return exprs
}

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert string
			Expr  string
		}
	}
}

// alertExprs returns the expression of every rule in alerts.yml, by alert name.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs/prometheus/alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	out := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out
}

// selector is one metric reference of a PromQL expression.
type selector struct {
	name     string
	matchers [][3]string // label, operator, value
}

// promqlKeywords are the words of PromQL that are neither metrics nor
// functions (functions are recognised by the parenthesis that follows):
// the aggregation operators, which may be followed by a by clause, and
// the binary operators' keywords.
func promqlKeywords() []string {
	return []string{"sum", "min", "max", "avg", "count", "group", "stddev", "stdvar", "topk", "bottomk",
		"quantile", "count_values", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
		"bool", "offset"}
}

// selectors returns the metric references of a PromQL expression and the
// label names of its by/without/on/ignoring clauses. It knows enough
// PromQL for these files: it skips string literals, range brackets,
// numbers and function names.
func selectors(expr string) ([]selector, []string) {
	tok := regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\[[^\]]*\]|[0-9][0-9.e+]*|[a-zA-Z_:][a-zA-Z0-9_:]*|\{[^}]*\}|\(|\)|.`)
	matcher := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
	toks := tok.FindAllString(expr, -1)
	var sels []selector
	var grouping []string
	for i := 0; i < len(toks); i++ {
		w := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		for next == " " || next == "\n" {
			toks = slices.Delete(toks, i+1, i+2)
			next = ""
			if i+1 < len(toks) {
				next = toks[i+1]
			}
		}
		if !regexp.MustCompile(`^[a-zA-Z_:]`).MatchString(w) {
			continue
		}
		if slices.Contains(promqlKeywords(), w) {
			if next == "(" && slices.Contains([]string{"by", "without", "on", "ignoring"}, w) {
				for i += 2; i < len(toks) && toks[i] != ")"; i++ {
					if l := strings.TrimSpace(toks[i]); l != "" && l != "," {
						grouping = append(grouping, l)
					}
				}
			}
			continue
		}
		if next == "(" { // a function
			continue
		}
		s := selector{name: w}
		if strings.HasPrefix(next, "{") {
			for _, m := range matcher.FindAllStringSubmatch(next, -1) {
				s.matchers = append(s.matchers, [3]string{m[1], m[2], m[3]})
			}
			i++
		}
		sels = append(sels, s)
	}
	return sels, grouping
}

// checkExpr reports every metric, label and label value of expr that
// robotsgate does not expose.
func checkExpr(t *testing.T, where, expr string, have exposed) {
	t.Helper()
	sels, grouping := selectors(expr)
	if len(sels) == 0 {
		t.Errorf("%s: no metric found in %q", where, expr)
	}
	labels := map[string]bool{}
	for _, l := range targetLabels() {
		labels[l] = true
	}
	for _, s := range sels {
		if s.name == "up" { // written by Prometheus for each target
			continue
		}
		series, ok := have[s.name]
		if !ok {
			t.Errorf("%s: metric %s is not on robotsgate's /metrics", where, s.name)
			continue
		}
		for l := range series {
			labels[l] = true
		}
		for _, m := range s.matchers {
			label, op, value := m[0], m[1], m[2]
			if slices.Contains(targetLabels(), label) {
				continue
			}
			values, ok := series[label]
			if !ok {
				t.Errorf("%s: %s has no label %s", where, s.name, label)
				continue
			}
			checkMatcherValue(t, where, s.name, label, op, value, values)
		}
	}
	for _, l := range grouping {
		if !labels[l] {
			t.Errorf("%s: grouping label %s is on none of its metrics", where, l)
		}
	}
}

// checkMatcherValue reports a matcher whose value no exposed series has:
// an exact value must exist, and so must each word of a regex that is a
// plain alternation (a|b); another regex must match some value.
func checkMatcherValue(t *testing.T, where, metric, label, op, value string, values map[string]bool) {
	t.Helper()
	switch op {
	case "=", "!=":
		if !values[value] {
			t.Errorf("%s: %s has no series with %s=%q", where, metric, label, value)
		}
	case "=~", "!~":
		if regexp.MustCompile(`^[a-zA-Z0-9_-]+(\|[a-zA-Z0-9_-]+)*$`).MatchString(value) {
			for _, v := range strings.Split(value, "|") {
				if !values[v] {
					t.Errorf("%s: %s has no series with %s=%q", where, metric, label, v)
				}
			}
			return
		}
		re := regexp.MustCompile("^(?:" + value + ")$")
		for v := range values {
			if re.MatchString(v) {
				return
			}
		}
		t.Errorf("%s: no %s series has a %s matching %q", where, metric, label, value)
	}
}

func TestDashboardAndAlertMetricsExist(t *testing.T) {
	have := scrapeRobotsgate(t)
	exprs := dashboardExprs(t)
	if len(exprs) < 7 {
		t.Fatalf("dashboard has %d queries", len(exprs))
	}
	for i, e := range exprs {
		checkExpr(t, "robotsgate.json query "+string(rune('0'+i/10))+string(rune('0'+i%10)), e, have)
	}
	alerts := alertExprs(t)
	for _, name := range []string{"RobotsgateRobotsFetchFailures", "RobotsgateAuditWriteErrors", "RobotsgateRedisDown"} {
		if alerts[name] == "" {
			t.Errorf("alerts.yml has no rule %s", name)
		}
	}
	for name, e := range alerts {
		checkExpr(t, "alerts.yml "+name, e, have)
	}
}

// TestSelectorsFindMetrics: the PromQL reader finds the metrics and
// labels of an expression, so that the test above can fail.
func TestSelectorsFindMetrics(t *testing.T) {
	sels, grouping := selectors(`histogram_quantile(0.9, sum by (le, x) (rate(a_bucket{r=~"p|q",s="v"}[5m]))) / on(instance) b_total > 0.5 and up`)
	var names []string
	for _, s := range sels {
		names = append(names, s.name)
	}
	if !slices.Equal(names, []string{"a_bucket", "b_total", "up"}) || !slices.Equal(grouping, []string{"le", "x", "instance"}) {
		t.Fatalf("metrics %v, grouping %v", names, grouping)
	}
	if m := sels[0].matchers; len(m) != 2 || m[0] != [3]string{"r", "=~", "p|q"} || m[1] != [3]string{"s", "=", "v"} {
		t.Fatalf("matchers %v", m)
	}
}

// TestPromtoolChecksRules runs promtool on the rules and their unit
// tests when it is installed (Debian: apt-get install prometheus).
func TestPromtoolChecksRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH")
	}
	dir := filepath.Join(repoRoot, "configs/prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
