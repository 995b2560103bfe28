package main

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/robotsgate/robotsgate/proxy/audit/query"
)

// crawlReport is the crawl report: what "robotsgate report" prints in
// every format (its JSON form as is).
type crawlReport struct {
	Generated string `json:"generated"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`
	Identity  string `json:"identity,omitempty"`
	// Records is the number of volume records read.
	Records int64     `json:"records"`
	Total   originRow `json:"total"`
	// Origins are the origins by requests, then bytes, most first; the
	// overflow bucket of the intervals that had one last (Other).
	Origins []originRow `json:"origins"`
}

// originRow is the counts of one origin (or of the overflow bucket, or
// of all: the total).
type originRow struct {
	Origin string `json:"origin,omitempty"`
	// Other marks the overflow bucket: origins beyond
	// audit_volume_max_origins in an interval, folded together; Folded
	// is how many (summed over intervals).
	Other       bool             `json:"other,omitempty"`
	Folded      int64            `json:"folded_origins,omitempty"`
	Requests    int64            `json:"requests"`
	Bytes       int64            `json:"bytes"`
	Status      map[string]int64 `json:"status,omitempty"`
	StatusBytes map[string]int64 `json:"status_bytes,omitempty"`
	Refused     map[string]int64 `json:"refused,omitempty"`
	OptOuts     map[string]int64 `json:"opt_outs,omitempty"`
	// RobotsSHA256 are the distinct robots.txt versions its records name
	// (absent when they name none).
	RobotsSHA256 []string `json:"robots_sha256,omitempty"`
}

// refusals returns the total of r's refusals.
func (r *originRow) refusals() int64 {
	var n int64
	for _, c := range r.Refused {
		n += c
	}
	return n
}

// addCounts adds v's counts to r.
func (r *originRow) addCounts(v *volumeCounts) {
	r.Requests += v.Requests
	r.Bytes += v.Bytes
	r.Folded += v.Origins
	sum := func(dst *map[string]int64, src map[string]int64) {
		for k, n := range src {
			if *dst == nil {
				*dst = map[string]int64{}
			}
			(*dst)[k] += n
		}
	}
	sum(&r.Status, v.Status)
	sum(&r.StatusBytes, v.StatusBytes)
	sum(&r.Refused, v.Refused)
	sum(&r.OptOuts, v.OptOuts)
}

// reportBuilder accumulates the records of a report.
type reportBuilder struct {
	rows     map[string]*originRow
	other    originRow
	versions map[string]map[string]bool // origin -> robots.txt versions
	records  int64
	bad      int64 // volume records that could not be read
}

func newReportBuilder() *reportBuilder {
	return &reportBuilder{rows: map[string]*originRow{}, versions: map[string]map[string]bool{}, other: originRow{Other: true}}
}

// volume adds a volume record of origin ("" for an overflow bucket).
func (rb *reportBuilder) volume(origin string, v *volumeCounts) {
	rb.records++
	row := &rb.other
	if origin != "" {
		if row = rb.rows[origin]; row == nil {
			row = &originRow{Origin: origin}
			rb.rows[origin] = row
		}
	}
	row.addCounts(v)
	for _, sha := range v.RobotsSHA256 {
		rb.robots(origin, sha)
	}
}

// robots notes that a record of origin used the robots.txt version sha.
func (rb *reportBuilder) robots(origin, sha string) {
	if origin == "" || sha == "" {
		return
	}
	if rb.versions[origin] == nil {
		rb.versions[origin] = map[string]bool{}
	}
	rb.versions[origin][sha] = true
}

// report returns the report of what was added, for filter f, made at now.
func (rb *reportBuilder) report(f query.Filter, now time.Time) crawlReport {
	rep := crawlReport{Generated: now.UTC().Format(time.RFC3339), Identity: f.User, Records: rb.records, Origins: []originRow{}}
	if !f.Since.IsZero() {
		rep.Since = f.Since.UTC().Format(time.RFC3339)
	}
	if !f.Until.IsZero() {
		rep.Until = f.Until.UTC().Format(time.RFC3339)
	}
	for origin, vs := range rb.versions {
		row := rb.rows[origin]
		if row == nil { // decisions, and no volume record: robots.txt versions only
			row = &originRow{Origin: origin}
			rb.rows[origin] = row
		}
		row.RobotsSHA256 = slices.Sorted(maps.Keys(vs))
	}
	for _, row := range rb.rows {
		rep.Origins = append(rep.Origins, *row)
	}
	slices.SortFunc(rep.Origins, func(a, b originRow) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Origin, b.Origin))
	})
	if rb.other.Requests > 0 || rb.other.Folded > 0 {
		rep.Origins = append(rep.Origins, rb.other)
	}
	rep.Total = originRow{Origin: ""}
	for i := range rep.Origins {
		o := &rep.Origins[i]
		rep.Total.addCounts(&volumeCounts{Requests: o.Requests, Bytes: o.Bytes, Status: o.Status, StatusBytes: o.StatusBytes,
			Refused: o.Refused, OptOuts: o.OptOuts})
	}
	return rep
}
