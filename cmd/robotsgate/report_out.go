package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The crawl report's table, CSV and JSON forms (report_html.go: HTML).

// statusColumns are the status classes of volume records, in column
// order.
var statusColumns = []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}

// writeReport writes rep to w in format; the table and the page list the
// top origins.
func writeReport(w io.Writer, rep crawlReport, format string, top int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var err error
	switch format {
	case "json":
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	case "csv":
		err = writeReportCSV(bw, rep)
	case "html":
		err = writeReportHTML(bw, rep, top)
	default:
		err = writeReportTable(bw, rep, top)
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// rowName is how the table, CSV and page name a row's origin.
func rowName(r *originRow) string {
	if r.Other {
		return "(other origins)"
	}
	return r.Origin
}

// countList is m as "k=n;k=n", keys sorted.
func countList(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.FormatInt(m[k], 10))
	}
	return strings.Join(parts, ";")
}

// writeReportCSV writes one row per origin: its counts, the refusals and
// opt-outs as "name=count" lists and the number of robots.txt versions.
func writeReportCSV(w io.Writer, rep crawlReport) error {
	cw := csv.NewWriter(w)
	head := append(append([]string{"origin", "requests", "bytes"}, statusColumns...), "refused", "refused_by_reason", "opt_outs", "robots_versions")
	if err := cw.Write(head); err != nil {
		return err
	}
	for i := range rep.Origins {
		r := &rep.Origins[i]
		rec := []string{safeCSV(rowName(r)), strconv.FormatInt(r.Requests, 10), strconv.FormatInt(r.Bytes, 10)}
		for _, c := range statusColumns {
			rec = append(rec, strconv.FormatInt(r.Status[c], 10))
		}
		rec = append(rec, strconv.FormatInt(r.refusals(), 10), safeCSV(countList(r.Refused)), safeCSV(countList(r.OptOuts)),
			strconv.Itoa(len(r.RobotsSHA256)))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// safeCSV keeps a cell from being read as a formula by a spreadsheet.
func safeCSV(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeReportTable writes the report for a terminal: the top origins,
// the refusals by reason, the opt-outs by site and the robots.txt
// versions.
func writeReportTable(w io.Writer, rep crawlReport, top int) error {
	fmt.Fprintf(w, "crawl report %s .. %s%s: %d volume records, %d requests, %s\n\n", orDash(rep.Since), orDash(rep.Until),
		identityText(rep.Identity), rep.Records, rep.Total.Requests, byteText(rep.Total.Bytes))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ORIGIN\tREQUESTS\tBYTES\t2XX\t3XX\t4XX\t5XX\tREFUSED")
	for i := range min(top, len(rep.Origins)) {
		r := &rep.Origins[i]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\n", rowName(r), r.Requests, byteText(r.Bytes),
			r.Status["2xx"], r.Status["3xx"], r.Status["4xx"], r.Status["5xx"], r.refusals())
	}
	if n := len(rep.Origins) - top; n > 0 {
		fmt.Fprintf(tw, "(%d more; -top or -format csv)\n", n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nrefused, by reason:")
	for _, k := range sortedByCount(rep.Total.Refused) {
		fmt.Fprintf(w, "  %-24s %d\n", k, rep.Total.Refused[k])
	}
	fmt.Fprintln(w, "\nopt-outs, by site:")
	for i := range rep.Origins {
		if r := &rep.Origins[i]; len(r.OptOuts) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", rowName(r), strings.ReplaceAll(countList(r.OptOuts), ";", ", "))
		}
	}
	fmt.Fprintln(w, "\nrobots.txt versions seen:")
	for i := range rep.Origins {
		if r := &rep.Origins[i]; len(r.RobotsSHA256) > 0 {
			fmt.Fprintf(w, "  %s: %d (%s)\n", rowName(r), len(r.RobotsSHA256), strings.Join(r.RobotsSHA256, ", "))
		}
	}
	return nil
}

// sortedByCount returns m's keys, largest count first.
func sortedByCount(m map[string]int64) []string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return int(min(max(m[b]-m[a], -1), 1)) })
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func identityText(id string) string {
	if id == "" {
		return ""
	}
	return " (identity " + id + ")"
}

// byteText is n bytes, in the largest binary unit that keeps it >= 1.
func byteText(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, i := float64(n), 0
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + []string{"B", "KiB", "MiB", "GiB", "TiB"}[i]
}
