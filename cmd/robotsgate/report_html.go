package main

import (
	"html/template"
	"io"
	"strconv"
	"strings"
)

// The crawl report's HTML form: one self-contained page (inline CSS and
// SVG charts, no script, nothing fetched) that a browser opens offline.

// chartBar is one bar of a horizontal bar chart: its label, its value
// and its segments.
type chartBar struct {
	Label, Value string
	Y            int
	Segs         []chartSeg
}

// chartSeg is a segment of a bar.
type chartSeg struct {
	X, W  int
	Class string // CSS class, the colour
	Title string // tooltip
}

// chart is a horizontal bar chart.
type chart struct {
	ID, Title string
	Height    int
	Bars      []chartBar
}

// Geometry of the charts, in SVG user units.
const (
	chartLabelW = 300 // label column
	chartBarW   = 520 // longest bar
	chartRowH   = 22
	chartTop    = 8
)

// statusChart is the chart of the top origins' requests, each bar split
// by status class.
func statusChart(rows []originRow) chart {
	c := chart{ID: "top-domains", Title: "Top origins by requests"}
	var most int64 = 1
	for _, r := range rows {
		most = max(most, r.Requests)
	}
	for i, r := range rows {
		b := chartBar{Label: shorten(rowName(&r), 44), Value: byteAndCount(r.Requests, r.Bytes), Y: chartTop + i*chartRowH}
		x := chartLabelW
		for _, cls := range statusColumns {
			n := r.Status[cls]
			if n == 0 {
				continue
			}
			w := max(int(int64(chartBarW)*n/most), 1)
			b.Segs = append(b.Segs, chartSeg{X: x, W: w, Class: "s" + cls, Title: cls + ": " + itoa(n)})
			x += w
		}
		c.Bars = append(c.Bars, b)
	}
	c.Height = chartTop*2 + len(c.Bars)*chartRowH
	return c
}

// countChart is a chart of counts by name (refusals by reason).
func countChart(id, title string, m map[string]int64) chart {
	c := chart{ID: id, Title: title}
	var most int64 = 1
	for _, n := range m {
		most = max(most, n)
	}
	for i, k := range sortedByCount(m) {
		w := max(int(int64(chartBarW)*m[k]/most), 1)
		c.Bars = append(c.Bars, chartBar{Label: k, Value: itoa(m[k]), Y: chartTop + i*chartRowH,
			Segs: []chartSeg{{X: chartLabelW, W: w, Class: "refused", Title: k + ": " + itoa(m[k])}}})
	}
	c.Height = chartTop*2 + len(c.Bars)*chartRowH
	return c
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// byteAndCount is "n requests, size".
func byteAndCount(n, bytes int64) string { return itoa(n) + " · " + byteText(bytes) }

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// reportPage is what the page template shows.
type reportPage struct {
	crawlReport
	Top                  []originRow
	More                 int
	StatusChart, Refused chart
	OptOuts              []originRow
	Versions             []originRow
	Columns              []string
}

// writeReportHTML writes rep as one HTML page listing the top origins.
func writeReportHTML(w io.Writer, rep crawlReport, top int) error {
	n := min(top, len(rep.Origins))
	p := reportPage{crawlReport: rep, Top: rep.Origins[:n], More: len(rep.Origins) - n, Columns: statusColumns,
		StatusChart: statusChart(rep.Origins[:n]), Refused: countChart("refusals", "Refusals by reason", rep.Total.Refused)}
	for _, r := range rep.Origins {
		if len(r.OptOuts) > 0 {
			p.OptOuts = append(p.OptOuts, r)
		}
		if len(r.RobotsSHA256) > 0 {
			p.Versions = append(p.Versions, r)
		}
	}
	return reportTemplate.Execute(w, p)
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"name": func(r originRow) string { return rowName(&r) }, "bytes": byteText, "commaList": func(m map[string]int64) string { return strings.ReplaceAll(countList(m), ";", ", ") },
	"status": func(r originRow, c string) int64 { return r.Status[c] }, "refusals": func(r originRow) int64 { return r.refusals() },
	"sorted": sortedByCount, "barW": func() int { return chartLabelW + chartBarW + 200 },
	"barEnd": func(b chartBar) int {
		if len(b.Segs) == 0 {
			return chartLabelW + 6
		}
		last := b.Segs[len(b.Segs)-1]
		return last.X + last.W + 6
	},
}).Parse(reportHTML))
