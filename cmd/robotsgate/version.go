package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set only by the linker, for builds without the repository's .git (the
// container image: .dockerignore leaves it out), e.g.
//
//	go build -ldflags "-X main.stampVersion=v1.2.3 -X main.stampCommit=$(git rev-parse HEAD)
//	  -X main.stampTime=$(git log -1 --format=%cI)" ./cmd/robotsgate
//
// A value set here wins over the build information's.
var (
	stampVersion string
	stampCommit  string
	stampTime    string
)

// buildStamp is the version information given to the linker.
type buildStamp struct{ version, commit, time string }

// runVersion prints the version of this binary ([versionLines]) and
// returns 0.
func runVersion(stdout io.Writer) int {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	for _, l := range versionLines(bi, buildStamp{stampVersion, stampCommit, stampTime}) {
		fmt.Fprintln(stdout, l)
	}
	return 0
}

// versionLines returns "field: value" lines of the build information bi
// (nil when the binary has none) and the linker's stamp (whose non-empty
// fields win): the module version ("(devel)" for a build from a
// checkout), the commit with "(modified)" when the work tree had changes,
// the commit's time and the Go version. A field the build did not record
// says "unknown".
func versionLines(bi *debug.BuildInfo, stamp buildStamp) []string {
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
	for _, f := range []struct {
		dst *string
		v   string
	}{{&version, stamp.version}, {&commit, stamp.commit}, {&when, stamp.time}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return []string{
		"robotsgate " + version,
		"commit: " + commit,
		"commit_time: " + when,
		"go: " + goVersion,
	}
}
