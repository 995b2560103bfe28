package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsgate/robotsgate/enforce/redisfleet"
)

// metricName matches the name of a robotsgate metric where the code
// defines one.
var metricName = regexp.MustCompile(`Name:\s*"(robotsgate_[a-z0-9_]+)"`)

// metricsRow matches a row of the metrics table of docs/production.md.
var metricsRow = regexp.MustCompile("^\\| `(robotsgate_[a-z0-9_]+)` \\|")

type fakeRedisHealth struct{}

func (fakeRedisHealth) Healthy() bool                 { return true }
func (fakeRedisHealth) Fallbacks() uint64             { return 0 }
func (fakeRedisHealth) Switches() (uint64, uint64)    { return 0, 0 }
func (fakeRedisHealth) Topology() redisfleet.Topology { return redisfleet.Standalone }

// exposedMetrics returns the names of the robotsgate_* metrics that the
// /metrics of a real robotsgate exposes after a refused and an allowed
// request with a purpose declared, those the Redis layer adds, and those
// the code defines (a vector without observations is not exposed).
func exposedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	origin, _ := newTestOrigin(t, nil)
	r := startServe(t, []string{"-audit-log", filepath.Join(t.TempDir(), "audit.log"), "-agent", "MetricsBot", "-purpose", "train-ai"}, nil)
	r.getAll(t, origin.URL+"/private", origin.URL+"/public")
	sc := bufio.NewScanner(strings.NewReader(r.metrics(t)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" && strings.HasPrefix(f[2], "robotsgate_") {
			names[f[2]] = true
		}
	}
	if len(names) < 5 {
		t.Fatalf("/metrics exposed only %v", names)
	}
	reg := prometheus.NewRegistry()
	if err := registerRedisMetrics(reg, fakeRedisHealth{}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	err = filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		for _, m := range metricName.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestProductionDocListsEveryMetric: the metrics table of
// docs/production.md has a row for every metric robotsgate exposes, and
// no row for one it does not.
func TestProductionDocListsEveryMetric(t *testing.T) {
	exposed := exposedMetrics(t)
	documented := map[string]bool{}
	prose, _ := proseLines(readRepoFile(t, "docs/production.md"))
	for _, line := range prose {
		if m := metricsRow.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
		}
	}
	var missing, stale []string
	for n := range exposed {
		if !documented[n] {
			missing = append(missing, n)
		}
	}
	for n := range documented {
		if !exposed[n] {
			stale = append(stale, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("docs/production.md: the metrics table lacks %v", missing)
	}
	if len(stale) > 0 {
		t.Errorf("docs/production.md: the metrics table lists %v, which robotsgate does not expose", stale)
	}
}

// TestReadmeLinksOperations: the operations guide is linked from the
// README (the link test then checks that it resolves).
func TestReadmeLinksOperations(t *testing.T) {
	if !strings.Contains(string(readRepoFile(t, "README.md")), "](docs/operations.md") {
		t.Error("README.md does not link docs/operations.md")
	}
	found := false
	for _, f := range docFiles(t) {
		found = found || f == "docs/operations.md"
	}
	if !found {
		t.Error("docs/operations.md is not among the files whose links TestDocsRelativeLinksResolve checks")
	}
}
