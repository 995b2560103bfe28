package enforce

import (
	"context"
	"errors"
	"net/url"

	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// TDMRep: an origin's /.well-known/tdmrep.json is fetched, cached,
// coordinated across a fleet and kept while unreachable exactly as its
// robots.txt is, in the same Store under its [TDMKey], by the
// same Fetcher (which must also be a FileFetcher; HTTPFetcher is).

// ReasonTDMReserved: TDMRep reserves the URL's TDM rights (tdm-reservation
// 1, from tdmrep.json before the request or from the response's header or
// meta after it) for a crawler whose purposes make TDMRep bind.
const ReasonTDMReserved Reason = "tdm-reserved"

// ReasonTDMUnknown: the origin's tdmrep.json could not be read (server
// error, 429, network error, a body over the size limit or of more rules
// than [tdmrep.MaxRules]), so whether the URL is reserved is not known, and
// usage.unknown is deny.
const ReasonTDMUnknown Reason = "tdm-unknown"

// FileFetcher fetches a policy file other than robots.txt, with the rules
// of Fetcher ([HTTPFetcher.FetchFile]).
type FileFetcher interface {
	FetchFile(ctx context.Context, origin, path, accept string) FetchResult
}

// tdmAccept is the Accept header of tdmrep.json fetches.
const tdmAccept = "application/json, */*;q=0.1"

// TDMVerdict is the TDMRep verdict of one URL.
type TDMVerdict struct {
	tdmrep.Verdict
	// Checked: TDMRep was consulted for the URL.
	Checked bool
	// Unknown: the file could not be read, so whether the URL is reserved
	// is not known (usage.unknown decides).
	Unknown bool
	// FileURL is the tdmrep.json consulted; FileStatus its fetch's status
	// ([StatusOK], [StatusUnavailable]: no file, [StatusUnreachable]) and
	// FileHTTPStatus the HTTP status.
	FileURL        string
	FileStatus     Status
	FileHTTPStatus int
	// FileNote says why the file gives no rules, "" when it does: the
	// fetch's error, or why its body was not read as rules.
	FileNote string
	// Via names the spelling of the path that matched, "" for the path as
	// sent.
	Via string
	// SHA256 is the hash of the tdmrep.json read (documents.go), "" when
	// none was.
	SHA256 string
}

// IsTDMRepFile reports whether a request of method for u asks for the
// tdmrep.json file itself: a GET or HEAD ("" is GET) of exactly
// /.well-known/tdmrep.json with no query, always allowed.
func IsTDMRepFile(u *url.URL, method string) bool {
	if method != "" && method != "GET" && method != "HEAD" {
		return false
	}
	return u.Opaque == "" && u.Path == tdmrep.WellKnownPath && u.RawPath == "" && u.RawQuery == "" && !u.ForceQuery
}

// rebuildTDM sets e.TDM and e.TDMErr from the body in force.
func (e *Entry) rebuildTDM() {
	e.Parsed, e.TDM, e.TDMErr = nil, nil, nil
	body := []byte(nil)
	switch {
	case e.Result.Status == StatusOK:
		body = e.Result.Body
	case e.Good != nil:
		body = e.Good.Body
	default:
		return
	}
	e.TDM, e.TDMErr = tdmrep.Parse(body)
}

// TDMRep returns the TDMRep verdict of tdmrep.json for u: the first rule
// that matches u's path and query (or, when that does not reserve,
// another spelling of it that origins may read as the same path, see
// spellings), fetching the file when no fresh copy is cached. A request
// for the file itself ([IsTDMRepFile]) or for /robots.txt (exactly, as
// Decide exempts it), which a crawler needs to obey the site, is not
// decided (Checked is false).
//
// A 4xx (but 429) or too many redirects mean the origin has no file: the
// reservation is unset. A body that is not a JSON array of rules means,
// as the protocol says, that the origin does not implement TDMRep: unset
// too, with FileNote saying why. A file that cannot be read (5xx, 429,
// network errors, a body over robots.max_bytes or of more than
// [tdmrep.MaxRules] rules) makes the verdict Unknown, unless a copy read
// within robots.unreachable_window still stands; an origin unreachable
// for longer is treated as having no file.
func (e *Enforcer) TDMRep(ctx context.Context, u *url.URL, method string) TDMVerdict {
	origin, err := Origin(u)
	if err != nil || IsTDMRepFile(u, method) || isRobotsTxt(u, method) {
		return TDMVerdict{}
	}
	v, file := e.tdmRules(ctx, origin)
	if file == nil {
		return v
	}
	var path string
	if u.Opaque != "" {
		path = robots.PathParamsQuery(u.String())
	} else {
		path = u.RequestURI()
	}
	v.Verdict, v.Via = DecideTDMRep(file, path)
	return v
}

// TDMRepSite returns the TDMRep verdict tdmrep.json gives every URL of
// u's origin alike ([tdmrep.File.DecideAll]): reserved only when every
// path is, by a rule that matches every path; Unknown when the file
// cannot be read, as for one URL. It is the decision of a caller that
// sees only the host (tunnel mode).
func (e *Enforcer) TDMRepSite(ctx context.Context, u *url.URL) TDMVerdict {
	origin, err := Origin(u)
	if err != nil {
		return TDMVerdict{}
	}
	v, file := e.tdmRules(ctx, origin)
	if file != nil {
		v.Verdict = file.DecideAll()
	}
	return v
}

// tdmRules returns the verdict of origin's tdmrep.json before any rule
// is matched (Checked, the file's status, why it gives no rules) and its
// rules in force, nil when there are none; the file is fetched when no
// fresh copy is cached.
func (e *Enforcer) tdmRules(ctx context.Context, origin string) (TDMVerdict, *tdmrep.File) {
	key := TDMKey(origin, addressOf(ctx)) // as served where the request goes (address.go)
	v := TDMVerdict{Checked: true, FileURL: key.URL()}
	en, ok := e.store.Get(ctx, key)
	if !ok || !e.clock.Now().Before(en.Expires) {
		got, err := e.refresh(ctx, key)
		if err != nil && en == nil {
			v.Unknown, v.FileStatus, v.FileNote = true, StatusUnreachable, err.Error()
			return v, nil
		}
		if err == nil {
			en = got
		}
	}
	v.FileStatus, v.FileHTTPStatus = en.Result.Status, en.Result.HTTPStatus
	return v, e.tdmFile(en, &v)
}

// DecideTDMRep returns the verdict of the tdmrep.json f for path (path
// and query, as sent): its first matching rule's, or, when that does not
// reserve, the first reservation of another spelling origins may read as
// the same path (see spellings), which via then names ("" for the path
// as sent). A spelling thus cannot slip past a reservation.
func DecideTDMRep(f *tdmrep.File, path string) (v tdmrep.Verdict, via string) {
	v = f.Decide(path)
	if v.Reserved() || !needsSpellings(path) {
		return v, ""
	}
	for _, sp := range spellings(path) {
		if sv := f.Decide(sp.path); sv.Reserved() {
			return sv, "the normalised path " + shown(sp.path) + " (" + sp.how + ")"
		}
	}
	return v, ""
}

// tdmFile returns the rules in force of the tdmrep.json entry en, nil
// when there are none; it fills v's FileNote and Unknown.
func (e *Enforcer) tdmFile(en *Entry, v *TDMVerdict) *tdmrep.File {
	r := &en.Result
	now := e.clock.Now()
	switch {
	case r.Status == StatusUnavailable:
		v.FileNote = "no tdmrep.json" + paren(r.Err)
		return nil
	case r.Status == StatusUnreachable && en.Good == nil:
		if !en.UnreachableSince.IsZero() && now.Sub(en.UnreachableSince) > e.window && !refusedDestination(en.Result) {
			v.FileNote = "tdmrep.json unreachable for longer than " + e.window.String() + paren(r.Err) + ": treated as absent"
			return nil
		}
		v.Unknown, v.FileNote = true, "tdmrep.json unreachable"+paren(r.Err)
		return nil
	}
	v.SHA256 = e.used(en)
	truncated := r.Truncated
	if r.Status != StatusOK {
		truncated = en.Good.Truncated
	}
	switch {
	case truncated:
		v.Unknown, v.FileNote = true, "tdmrep.json is longer than robots.max_bytes: its rules cannot be read"
		return nil
	case errors.Is(en.TDMErr, tdmrep.ErrTooManyRules):
		v.Unknown, v.FileNote = true, en.TDMErr.Error()
		return nil
	case en.TDMErr != nil:
		v.FileNote = en.TDMErr.Error() + ": the origin does not implement TDMRep"
		return nil
	}
	return en.TDM
}
