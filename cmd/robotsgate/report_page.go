package main

// reportHTML is the template of the crawl report's page (report_html.go):
// everything inline, nothing fetched, no script.
const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>robotsgate crawl report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #1d232b; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border-bottom: 1px solid #dde; padding: .25em .7em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.list { text-align: left; font-size: .9em; }
.meta { color: #555; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
.s1xx { fill: #9aa5b1; background: #9aa5b1; } .s2xx { fill: #2f9e44; background: #2f9e44; }
.s3xx { fill: #1c7ed6; background: #1c7ed6; } .s4xx { fill: #f08c00; background: #f08c00; }
.s5xx { fill: #e03131; background: #e03131; } .sother { fill: #868e96; background: #868e96; } .refused { fill: #c2255c; }
.legend span { display: inline-block; width: .9em; height: .9em; margin: 0 .3em 0 1em; vertical-align: middle; }
code { font-size: .85em; word-break: break-all; }
</style>
</head>
<body>
<h1>Crawl report</h1>
<p class="meta">{{if .Since}}From {{.Since}}{{else}}From the start of the log{{end}} {{if .Until}}until {{.Until}}{{else}}until its end{{end}}{{if .Identity}}, identity <b>{{.Identity}}</b>{{end}}.
{{.Records}} volume records: {{.Total.Requests}} requests, {{bytes .Total.Bytes}} sent to the crawler. Generated {{.Generated}} by robotsgate report.</p>

<h2>Top origins by volume</h2>
{{template "chart" .StatusChart}}
<p class="legend">{{range .Columns}}<span class="s{{.}}"></span>{{.}}{{end}}</p>
<table id="origins">
<thead><tr><th>origin</th><th>requests</th><th>bytes</th>{{range .Columns}}<th>{{.}}</th>{{end}}<th>refused</th></tr></thead>
<tbody>
{{- range $r := .Top}}
<tr><td>{{name $r}}</td><td>{{$r.Requests}}</td><td>{{bytes $r.Bytes}}</td>{{range $.Columns}}<td>{{status $r .}}</td>{{end}}<td>{{refusals $r}}</td></tr>
{{- end}}
</tbody>
</table>
{{if .More}}<p class="meta">{{.More}} more origins: robotsgate report -top, or -format csv.</p>{{end}}

<h2>What was refused, and why</h2>
{{if .Total.Refused}}{{template "chart" .Refused}}
<table id="refused"><thead><tr><th>reason</th><th>refusals</th></tr></thead><tbody>
{{- range $k := sorted .Total.Refused}}
<tr><td>{{$k}}</td><td>{{index $.Total.Refused $k}}</td></tr>
{{- end}}
</tbody></table>{{else}}<p>Nothing was refused.</p>{{end}}

<h2>Sites that opted out, and of what</h2>
{{if .OptOuts}}<table id="opt-outs"><thead><tr><th>origin</th><th>opt-outs seen (decisions)</th></tr></thead><tbody>
{{- range .OptOuts}}
<tr><td>{{name .}}</td><td class="list">{{commaList .OptOuts}}</td></tr>
{{- end}}
</tbody></table>
<p class="meta">robots:disallow: robots.txt disallowed the URL; usage:PURPOSE: Content-Usage or Content-Signal disallowed the purpose;
content-use:LEVEL: the site's Content-Signal use= level refused the declared use; tdm:reserved: TDMRep reserved the rights;
license:STATE: the site's RSL license prohibited the use or required a license.</p>{{else}}<p>No opt-out was seen.</p>{{end}}

<h2>robots.txt versions seen</h2>
{{if .Versions}}<table id="robots-versions"><thead><tr><th>origin</th><th>versions</th><th>SHA-256</th></tr></thead><tbody>
{{- range .Versions}}
<tr><td>{{name .}}</td><td>{{len .RobotsSHA256}}</td><td class="list">{{range .RobotsSHA256}}<code>{{.}}</code> {{end}}</td></tr>
{{- end}}
</tbody></table>{{else}}<p>The records name no robots.txt version.</p>{{end}}
</body>
</html>
{{define "chart"}}<svg id="{{.ID}}" role="img" aria-label="{{.Title}}" width="{{barW}}" height="{{.Height}}" viewBox="0 0 {{barW}} {{.Height}}" xmlns="http://www.w3.org/2000/svg">
<title>{{.Title}}</title>
{{- range $b := .Bars}}
<g><text x="0" y="{{$b.Y}}" dy="14">{{$b.Label}}</text>
{{- range $b.Segs}}<rect x="{{.X}}" y="{{$b.Y}}" width="{{.W}}" height="18" class="{{.Class}}"><title>{{.Title}}</title></rect>{{end}}
<text x="{{barEnd $b}}" y="{{$b.Y}}" dy="14">{{$b.Value}}</text></g>
{{- end}}
</svg>{{end}}
`
