package config

// Unknown ROBOTSGATE_* environment variables: a misspelled one
// (ROBOTSGATE_LISEN) would be ignored silently, while a misspelled flag
// or YAML key is an error; it gets a warning with the closest name.

import (
	"slices"
	"sort"
	"strings"
)

// toolingEnv returns the ROBOTSGATE_* variables that are no setting but
// are read by the tests, benchmarks and CI (internal/redistest, the
// corpus and docs tests, child processes of tests): they never warn.
func toolingEnv() []string {
	return []string{
		"ROBOTSGATE_REQUIRE_REDIS", "ROBOTSGATE_REQUIRE_NETNS", "ROBOTSGATE_REQUIRE_NODE",
		"ROBOTSGATE_ROBOTS_CORPUS", "ROBOTSGATE_REDIS_SERVER", "ROBOTSGATE_REDIS_CLI",
		"ROBOTSGATE_UPDATE_DOCS", "ROBOTSGATE_TEST_BIN", "ROBOTSGATE_SIGNAL_HELPER",
		"ROBOTSGATE_NETNS_CHILD", "ROBOTSGATE_MITM_BENCH_CHILD", "ROBOTSGATE_MITM_BENCH_PROFILE",
		"ROBOTSGATE_BENCH_AUDIT_MB", "ROBOTSGATE_FULLDISK_CHILD",
	}
}

// settingEnv returns the environment variable of every setting, and
// ROBOTSGATE_CONFIG.
func settingEnv() []string {
	names := []string{configFlag.env()}
	for _, o := range options() {
		if e := o.env(); e != "" {
			names = append(names, e)
		}
	}
	return names
}

// UnknownEnv returns one warning for each variable of environ (as
// [os.Environ] gives it, "NAME=value") that starts with ROBOTSGATE_ but
// names no setting (nor a variable of the tests and CI), with the
// closest setting's variable when one is near; sorted by name. An
// empty variable counts as unset, as for settings.
func UnknownEnv(environ []string) []string {
	known := settingEnv()
	var warnings []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || value == "" || slices.Contains(known, name) || slices.Contains(toolingEnv(), name) {
			continue
		}
		w := "unknown environment variable " + name + " is ignored"
		if s := closestEnv(name, known); s != "" {
			w += " (did you mean " + s + "?)"
		}
		warnings = append(warnings, w)
	}
	sort.Strings(warnings)
	return warnings
}

// closestEnv returns the name of known nearest to name by edit distance
// (at most a third of the part after the prefix wrong), "" when none is
// close.
func closestEnv(name string, known []string) string {
	rest := strings.TrimPrefix(name, envPrefix)
	best, bestDist := "", len(rest)/3+2
	for _, k := range known {
		if d := keyDistance(rest, strings.TrimPrefix(k, envPrefix)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
