package enforce

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// RSL licenses: the documents a robots.txt's License lines name are
// fetched, cached, coordinated across a fleet and kept while unreachable
// exactly as robots.txt is, in the same Store under their [LicenseKey],
// by the same Fetcher (which must also be a FileFetcher; HTTPFetcher is).

// Reasons of license decisions.
const (
	// ReasonLicenseProhibited: the site's RSL license prohibits a
	// declared purpose for the URL (or permits only other uses).
	ReasonLicenseProhibited Reason = "license-prohibited"
	// ReasonLicenseRequired: the license grants the declared purposes
	// only with a license token (a License Server, a paid license), and
	// none is configured for its server.
	ReasonLicenseRequired Reason = "license-required"
	// ReasonLicenseUnknown: a license document could not be read, so the
	// terms are not known, and usage.unknown is deny.
	ReasonLicenseUnknown Reason = "license-unknown"
)

// maxLicenseDocs is the most license documents one decision reads; a
// robots.txt naming more for a crawler makes its terms unknown.
const maxLicenseDocs = 8

// licenseAccept is the Accept header of license fetches.
const licenseAccept = "application/rsl+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1"

// fetchLicense fetches the license document at raw (a [LicenseKey]'s URL).
func (e *Enforcer) fetchLicense(ctx context.Context, raw string) FetchResult {
	u, err := url.Parse(raw)
	ff, ok := e.fetcher.(FileFetcher)
	switch {
	case !ok:
		return FetchResult{Status: StatusUnavailable, Err: "the fetcher cannot fetch license documents", ErrKind: FetchOther}
	case err != nil || u.Host == "":
		return FetchResult{Status: StatusUnreachable, FinalURL: raw, Err: "bad license URL", ErrKind: FetchBadURL}
	}
	origin := strings.ToLower(u.Scheme) + "://" + u.Host
	return ff.FetchFile(ctx, origin, u.RequestURI(), licenseAccept)
}

// rebuildLicense sets e.License and e.LicenseErr from the body in force,
// with the origins of its full-URL contents in canonical spelling.
func (e *Entry) rebuildLicense() {
	e.License, e.LicenseErr = nil, nil
	r := &e.Result
	if r.Status != StatusOK {
		r = e.Good
	}
	if r == nil {
		return
	}
	if r.Truncated {
		e.LicenseErr = errors.New("the license document is longer than robots.max_bytes")
		return
	}
	e.License, e.LicenseErr = rsl.Parse(r.Body)
	if e.License == nil {
		return
	}
	for i := range e.License.Contents {
		c := &e.License.Contents[i]
		if c.Origin == "" {
			continue
		}
		if o, ok := canonicalOrigin(c.Origin); ok {
			c.Origin = o
		}
	}
}

// canonicalOrigin returns the origin of the absolute URL raw in the
// spelling of [Origin].
func canonicalOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	o, err := Origin(u)
	return o, err == nil
}

// LicenseUses maps declared purposes to RSL usage tokens: train-ai to
// ai-train, ai-input and ai-use to ai-input, search to search.
func LicenseUses(p aipref.Set) rsl.Uses {
	var u rsl.Uses
	if p.Has(aipref.TrainAI) {
		u |= rsl.UseAITrain
	}
	if p.Has(aipref.AIInput) || p.Has(aipref.AIUse) {
		u |= rsl.UseAIInput
	}
	if p.Has(aipref.Search) {
		u |= rsl.UseSearch
	}
	return u
}

// LicenseVerdict is what the RSL licenses of a site say about one URL
// for a crawler's declared purposes.
type LicenseVerdict struct {
	rsl.Verdict
	// Checked: licenses were consulted (the robots.txt in force names
	// some for the crawler, and it declared a purpose).
	Checked bool
	// Unknown: a license document could not be read (Note says why), so
	// the terms are not known; a prohibition read from another document
	// still decides.
	Unknown bool
	// License is the document that decided (or could not be read);
	// Licenses every document consulted.
	License  string
	Licenses []string
	// SHA256 is the hashes of the documents of Licenses that were read
	// (documents.go), comma-separated in that order; "" when none was.
	SHA256 string
	// TokenServer is the canonical origin of the License Server whose
	// token a Required verdict needs: the content's server, or the
	// license document's origin when it names none.
	TokenServer string
	// Note says why a document gives no terms, "" when all did.
	Note string
	// Via names the spelling of the path that was prohibited, "" for the
	// path as sent.
	Via string
	// Token says how a Required verdict's token was provided: "sent"
	// (configured, added by the proxy), "client" (the client's own
	// Authorization), "missing", "http" (configured, but the request is
	// plain http), "tunnel" (configured, but the proxy cannot add it
	// inside a tunnel); set by the proxy.
	Token string
}

// Licenses returns the verdict of the RSL licenses that robots.txt's
// License lines name for agent ([robots.Robots.Licenses]) on u, for
// the uses of purposes ([LicenseUses]), fetching the documents that are
// not cached fresh. No purpose, no License line or a request for
// /robots.txt itself: not checked.
func (e *Enforcer) Licenses(ctx context.Context, u *url.URL, method, agent string, purposes aipref.Set) LicenseVerdict {
	origin, err := Origin(u)
	if err != nil {
		return LicenseVerdict{}
	}
	return e.LicensesOf(ctx, u, origin, method, agent, purposes)
}

// LicensesOf is [Enforcer.Licenses] for a caller that has u's origin
// ([Origin]) already, origin.
func (e *Enforcer) LicensesOf(ctx context.Context, u *url.URL, origin, method, agent string, purposes aipref.Set) LicenseVerdict {
	uses := LicenseUses(purposes)
	if uses == 0 || isRobotsTxt(u, method) {
		return LicenseVerdict{}
	}
	path := requestPath(u)
	return e.licenses(ctx, origin, agent, func(urls []string) bool { return isLicenseDoc(u, method, origin, urls) },
		func(doc *rsl.Document) (rsl.Verdict, string) { return DecideLicense(doc, origin, path, uses) })
}

// LicensesSite returns the verdict of the RSL licenses that robots.txt
// names for agent on every URL of u's origin alike, for the uses of
// purposes: the documents' contents that cover the whole site
// ([rsl.Document.DecideAll]); Unknown when a document cannot be read, as
// for one URL. It is the decision of a caller that sees only the host
// (tunnel mode).
func (e *Enforcer) LicensesSite(ctx context.Context, u *url.URL, agent string, purposes aipref.Set) LicenseVerdict {
	origin, err := Origin(u)
	uses := LicenseUses(purposes)
	if err != nil || uses == 0 {
		return LicenseVerdict{}
	}
	return e.licenses(ctx, origin, agent, func([]string) bool { return false },
		func(doc *rsl.Document) (rsl.Verdict, string) { return doc.DecideAll(origin, uses), "" })
}

// licenses is the verdict of the license documents robots.txt names for
// agent on origin, each decided by decide; exempt says, given their
// URLs, that the request is not decided by them (it reads one).
func (e *Enforcer) licenses(ctx context.Context, origin, agent string, exempt func([]string) bool,
	decide func(*rsl.Document) (rsl.Verdict, string)) LicenseVerdict {
	var err error
	ren, ok := e.store.Get(ctx, RobotsKey(origin, addressOf(ctx)))
	if !ok { // evicted since the robots.txt decision: fetched again
		if ren, err = e.Entry(ctx, origin); err != nil {
			return LicenseVerdict{Checked: true, Unknown: true, Note: "robots.txt not available: " + err.Error()}
		}
	}
	if ren.Parsed == nil {
		return LicenseVerdict{}
	}
	urls, complete := ren.Parsed.Licenses(agent)
	if len(urls) == 0 && complete || exempt(urls) {
		return LicenseVerdict{}
	}
	v := LicenseVerdict{Checked: true, Licenses: urls}
	if !complete || len(urls) > maxLicenseDocs {
		v.Unknown, v.Note = true, "robots.txt names more license documents than robotsgate reads"
		v.Licenses = urls[:min(len(urls), maxLicenseDocs)]
		return v
	}
	docs, notes, sums := e.licenseDocs(ctx, urls, origin)
	v.SHA256 = joinSums(sums)
	unreadable := ""
	for i, lu := range urls {
		doc, note := docs[i], notes[i]
		if doc == nil {
			if !v.Unknown {
				v.Unknown, v.Note, unreadable = true, note, lu
			}
			continue
		}
		dv, via := decide(doc)
		if dv.State > v.State {
			v.Verdict, v.Via, v.License = dv, via, lu
		}
	}
	switch {
	case v.State == rsl.Required:
		v.TokenServer = tokenServer(v.Server, v.License)
	case v.Unknown && v.State != rsl.Prohibited:
		v.License = unreadable // what decided is that it could not be read
	}
	return v
}

// requestPath is u's path and query as sent.
func requestPath(u *url.URL) string {
	if u.Opaque != "" {
		return strings.TrimPrefix(u.String(), u.Scheme+":")
	}
	return u.RequestURI()
}

// DecideLicense is doc's verdict for path (path and query) on origin, for uses: when the path as
// sent is not prohibited, another spelling origins may read as the same
// path (see spellings) that is prohibited decides, and via names it.
func DecideLicense(doc *rsl.Document, origin, path string, uses rsl.Uses) (rsl.Verdict, string) {
	v := doc.Decide(origin, path, uses)
	if v.State == rsl.Prohibited || !needsSpellings(path) {
		return v, ""
	}
	for _, sp := range spellings(path) {
		if sv := doc.Decide(origin, sp.path, uses); sv.State == rsl.Prohibited {
			return sv, "the normalised path " + shown(sp.path) + " (" + sp.how + ")"
		}
	}
	return v, ""
}

// tokenServer is the canonical origin of server, or of the license
// document lic when server is "" or not a URL.
func tokenServer(server, lic string) string {
	if o, ok := canonicalOrigin(server); ok && server != "" {
		return o
	}
	o, _ := canonicalOrigin(lic)
	return o
}

// licenseDocs returns the documents at urls, fetched at the same time
// (one slow license server delays a decision by one fetch timeout, not
// by one per document), with the notes of those that give none and the
// hashes of those read.
func (e *Enforcer) licenseDocs(ctx context.Context, urls []string, origin string) ([]*rsl.Document, []string, []string) {
	docs, notes, sums := make([]*rsl.Document, len(urls)), make([]string, len(urls)), make([]string, len(urls))
	addr := addressOf(ctx)
	if len(urls) == 1 {
		docs[0], notes[0], sums[0] = e.licenseDoc(ctx, urls[0], licenseKeyAt(urls[0], origin, addr))
		return docs, notes, sums
	}
	var wg sync.WaitGroup
	for i, lu := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs[i], notes[i], sums[i] = e.licenseDoc(ctx, lu, licenseKeyAt(lu, origin, addr))
		}()
	}
	wg.Wait()
	return docs, notes, sums
}

// joinSums joins the non-empty hashes of sums with commas.
func joinSums(sums []string) string {
	out := ""
	for _, s := range sums {
		if s != "" && out != "" {
			out += ","
		}
		out += s
	}
	return out
}

// licenseDoc returns the document at lu (whose key is key) in force,
// fetching it when no fresh copy is cached, and the hash of the body
// read; nil and why when there is none.
func (e *Enforcer) licenseDoc(ctx context.Context, lu string, key Key) (*rsl.Document, string, string) {
	en, ok := e.store.Get(ctx, key)
	if !ok || !e.clock.Now().Before(en.Expires) {
		got, err := e.refresh(ctx, key)
		if err != nil && en == nil {
			return nil, "license " + lu + " unreachable: " + err.Error(), ""
		}
		if err == nil {
			en = got
		}
	}
	r := &en.Result
	switch {
	case en.License != nil:
		return en.License, "", e.used(en)
	case en.LicenseErr != nil:
		return nil, "license " + lu + ": " + en.LicenseErr.Error(), e.used(en)
	case r.Status == StatusUnavailable:
		return nil, "license " + lu + " unavailable" + paren(r.Err), ""
	}
	return nil, "license " + lu + " unreachable" + paren(r.Err), ""
}

// isLicenseDoc reports whether a request of method for u (on origin)
// fetches one of the license documents urls: a GET or HEAD of one is
// never decided by licenses, so that a crawler can read the terms it
// must obey.
func isLicenseDoc(u *url.URL, method, origin string, urls []string) bool {
	if method != "" && method != "GET" && method != "HEAD" {
		return false
	}
	for _, lu := range urls {
		l, err := url.Parse(lu)
		if err != nil {
			continue
		}
		if o, err := Origin(l); err == nil && o == origin && l.RequestURI() == u.RequestURI() {
			return true
		}
	}
	return false
}
