package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion prints the version of this binary (versionLines) and
// returns 0.
func runVersion(stdout io.Writer) int {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	for _, l := range versionLines(bi) {
		fmt.Fprintln(stdout, l)
	}
	return 0
}

// versionLines returns "field: value" lines of the build information bi
// (nil when the binary has none): the module version ("(devel)" for a
// build from a checkout), the commit with "(modified)" when the work tree
// had changes, the commit's time and the Go version. A field the build
// did not record says "unknown".
func versionLines(bi *debug.BuildInfo) []string {
	version, goVersion := "(devel)", runtime.Version()
	settings := map[string]string{}
	if bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	commit, when := "unknown", "unknown"
	if v := settings["vcs.revision"]; v != "" {
		commit = v
		if settings["vcs.modified"] == "true" {
			commit += " (modified)"
		}
	}
	if v := settings["vcs.time"]; v != "" {
		when = v
	}
	return []string{
		"robotsgate " + version,
		"commit: " + commit,
		"commit_time: " + when,
		"go: " + goVersion,
	}
}
