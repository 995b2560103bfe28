package main

import (
	"bytes"
	"fmt"
	"html/template"
	"net/mail"
	"slices"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// The crawler information page of "robotsgate publish": who the crawler
// is, what it collects for, how it reads robots.txt and the other
// opt-outs, how to block it and whom to contact. Everything from the
// configuration is escaped by html/template.

// crawlerPageData is what the page template shows.
type crawlerPageData struct {
	Name, Contact, ContactHref string
	Tokens                     []string // product tokens, each once
	FromUserAgent              bool     // some identity takes its token from each request's User-Agent
	Purposes                   []string
	RobotsUA                   string
	TTL, UnreachableWindow     string
	CrawlDelay                 string
	Usage, TDMRep, License     string
	RobotTags, ContentUse      string
	Signers                    []signing.PublishedIdentity // identities that sign, with a key directory
	BlockToken                 string
}

// crawlerPage renders the page of cfg and its identities.
func crawlerPage(cfg config.Config, ids []signing.PublishedIdentity) ([]byte, error) {
	d := crawlerPageData{Contact: cfg.Crawler.Contact, RobotsUA: cfg.Robots.UserAgent,
		TTL: cfg.Robots.TTL.String(), UnreachableWindow: cfg.Robots.UnreachableWindow.String(),
		CrawlDelay: string(cfg.Politeness.CrawlDelay), Usage: string(cfg.Usage.Response), TDMRep: string(cfg.TDMRep.Mode),
		License: string(cfg.License.Mode), RobotTags: string(cfg.RobotTags.Mode), ContentUse: string(cfg.ContentUse)}
	d.ContactHref = contactHref(cfg.Crawler.Contact)
	for _, id := range ids {
		if id.Token == "" {
			d.FromUserAgent = true
		} else if !slices.Contains(d.Tokens, id.Token) {
			d.Tokens = append(d.Tokens, id.Token)
		}
		for _, p := range id.Purposes {
			if !slices.Contains(d.Purposes, p) {
				d.Purposes = append(d.Purposes, p)
			}
		}
		if id.Agent != "" && (id.User == "" || id.OwnSigner) {
			d.Signers = append(d.Signers, id)
		}
	}
	d.Name = crawlerName(cfg, strings.Join(d.Tokens, ", "))
	d.BlockToken = "*"
	if len(d.Tokens) > 0 {
		d.BlockToken = d.Tokens[0]
	}
	var b bytes.Buffer
	if err := crawlerTemplate.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("crawler page: %w", err)
	}
	return b.Bytes(), nil
}

// contactHref is the link of a contact: mailto: for an e-mail address,
// the URL itself otherwise (html/template still vets it).
func contactHref(c string) string {
	if c == "" {
		return ""
	}
	if _, err := mail.ParseAddress(c); err == nil && !strings.Contains(c, "://") && !strings.HasPrefix(c, "mailto:") {
		return "mailto:" + c
	}
	return c
}

var crawlerTemplate = template.Must(template.New("crawler").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}}: crawler information</title>
<style>body { font: 15px/1.5 system-ui, sans-serif; max-width: 50em; margin: 2em auto; padding: 0 1em; color: #1d232b; }
code, pre { background: #f1f3f5; padding: .1em .3em; } pre { padding: .6em; overflow-x: auto; }</style>
</head>
<body>
<h1>{{.Name}}</h1>
<p>This page describes a web crawler whose requests go through <a href="https://github.com/robotsgate/robotsgate">robotsgate</a>,
a proxy that refuses every request the site's robots.txt and other machine-readable opt-outs do not permit, before it leaves.</p>

<h2 id="tokens">Product tokens</h2>
{{if .Tokens}}<p>It identifies itself in robots.txt with the product token{{if gt (len .Tokens) 1}}s{{end}}:</p>
<ul>{{range .Tokens}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}
{{if .FromUserAgent}}<p>{{if .Tokens}}Other requests are{{else}}Its requests are{{end}} decided for the product token of each request's User-Agent header.</p>{{end}}
<p>It fetches robots.txt with the User-Agent <code>{{.RobotsUA}}</code>.</p>

<h2 id="purposes">Purposes</h2>
{{if .Purposes}}<p>It collects content for: {{range $i, $p := .Purposes}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}
(the purposes of the IETF AI preferences vocabulary). A site's usage preference that disallows one of them is honoured.</p>
{{else}}<p>It declares no purpose; usage preferences are recorded.</p>{{end}}

<h2 id="robots">How it reads robots.txt</h2>
<ul>
<li>robots.txt is read as RFC 9309 specifies: the group of its product token, else the <code>*</code> group; the longest matching rule wins, Allow on a tie.</li>
<li>A copy is kept at most {{.TTL}} (less when Cache-Control says so). A robots.txt answered with 4xx allows everything;
one that cannot be fetched (5xx, network errors) disallows everything, for at most {{.UnreachableWindow}}.</li>
<li>Crawl-delay: {{.CrawlDelay}}.</li>
</ul>

<h2 id="opt-outs">Other opt-outs it reads</h2>
<ul>
<li>Content-Usage and Content-Signal lines in robots.txt and response headers, and <code>noai</code> robots tags: {{.Usage}}.</li>
{{if .ContentUse}}<li>Content-Signal <code>use=</code>: it keeps content at the level <code>{{.ContentUse}}</code>; sites stating a lower level are not fetched.</li>{{end}}
<li>W3C TDMRep (<code>/.well-known/tdmrep.json</code>, the <code>tdm-reservation</code> header and meta tag): {{.TDMRep}}.</li>
<li>RSL licenses: {{.License}}.</li>
<li>X-Robots-Tag and meta robots: {{.RobotTags}}.</li>
</ul>

<h2 id="block">How to block it</h2>
<p>Disallow it in your robots.txt:</p>
<pre>User-agent: {{.BlockToken}}
Disallow: /</pre>
<p>or state your usage preference, e.g. <code>Content-Usage: train-ai=n</code> in robots.txt, or reserve text and data mining rights with TDMRep.
Changes take effect when the cached copy expires (at most {{.TTL}}).</p>

{{if .Signers}}<h2 id="web-bot-auth">Request signatures (Web Bot Auth)</h2>
<p>Its requests carry HTTP Message Signatures. The keys are published at:</p>
<ul>{{range .Signers}}<li><a href="{{.Agent}}">{{.Agent}}</a> (keyid <code>{{.KeyID}}</code>{{if .User}}, identity {{.User}}{{end}}{{if .Token}}, product token <code>{{.Token}}</code>{{end}})</li>{{end}}</ul>{{end}}

<h2 id="contact">Contact</h2>
{{if .Contact}}<p>Questions and complaints: <a href="{{.ContactHref}}">{{.Contact}}</a>.</p>{{else}}<p>No contact is configured (crawler.contact).</p>{{end}}
</body>
</html>
`))
