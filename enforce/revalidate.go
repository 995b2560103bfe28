package enforce

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Courteous re-fetches (RFC 9111). A policy document fetched with
// validators (ETag, Last-Modified) is re-fetched conditionally
// (If-None-Match, If-Modified-Since); a 304 keeps the copy in force, its
// parsed form and its hash, and counts as a fresh fetch. A 304 never
// opens a site: one answering a request that was not conditional, or
// for an entry with no parsed copy to keep, is no answer, and one naming
// another ETag than the one asked for makes the document fetched again
// unconditionally.

// MaxFreshness is the longest a fetched policy document is fresh,
// whatever robots.ttl or Cache-Control say: RFC 9309 §2.4's 24 hours.
const MaxFreshness = 24 * time.Hour

// maxValidator bounds the length of a validator kept and sent back: a
// longer one is not kept (the next fetch is then unconditional).
const maxValidator = 256

// validators are what makes a fetch conditional: the ETag and
// Last-Modified of the copy in force.
type validators struct {
	ETag         string
	LastModified string
}

// validatorsKey is the context key of [withValidators].
type validatorsKey struct{}

// withValidators returns ctx asking the fetch it carries to be
// conditional on v: a [Fetcher] that supports it sends If-None-Match and
// If-Modified-Since and answers a 304 with NotModified set.
func withValidators(ctx context.Context, v validators) context.Context {
	return context.WithValue(ctx, validatorsKey{}, v)
}

// setValidators adds the conditional headers of the validators of ctx
// to h and reports whether there were any.
func setValidators(h http.Header, ctx context.Context) bool {
	v, _ := ctx.Value(validatorsKey{}).(validators)
	if v.ETag != "" {
		h.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		h.Set("If-Modified-Since", v.LastModified)
	}
	return v.ETag != "" || v.LastModified != ""
}

// cacheHeaders fills r's caching fields from resp's header and, when
// resp is a 304 to a conditional request, makes r a NotModified result
// and reports so.
func cacheHeaders(r *FetchResult, resp *http.Response, conditional bool) bool {
	h := resp.Header
	r.MaxAge, r.HasMaxAge = maxAge(h)
	r.NoCache = noCache(h)
	if v := h.Get("ETag"); len(v) <= maxValidator {
		r.ETag = v
	}
	if v := h.Get("Last-Modified"); len(v) <= maxValidator {
		r.LastModified = v
	}
	if resp.StatusCode == http.StatusNotModified && conditional {
		r.Status, r.NotModified = StatusOK, true
		return true
	}
	return false
}

// noCache reports whether h's Cache-Control says no-store or no-cache.
func noCache(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d, _, _ = strings.Cut(strings.TrimSpace(d), "=")
			if strings.EqualFold(d, "no-store") || strings.EqualFold(d, "no-cache") {
				return true
			}
		}
	}
	return false
}

// freshFor is how long a result r is fresh: robots.ttl, or its max-age
// clamped to [MinTTL, TTL], or MinTTL when it may not be stored; never
// more than [MaxFreshness].
func (e *Enforcer) freshFor(r *FetchResult) time.Duration {
	ttl := min(e.ttl, MaxFreshness)
	switch {
	case r.NoCache:
		return min(e.minTTL, ttl)
	case r.HasMaxAge:
		return min(max(r.MaxAge, e.minTTL), ttl)
	}
	return ttl
}

// validatorsOf returns the validators a re-fetch of prev may send: those
// of its latest result when that is a good copy with its parsed form.
func validatorsOf(prev *Entry) (validators, bool) {
	if prev == nil || prev.Result.Status != StatusOK || !prev.parsedOK() {
		return validators{}, false
	}
	v := validators{ETag: prev.Result.ETag, LastModified: prev.Result.LastModified}
	return v, v.ETag != "" || v.LastModified != ""
}

// parsedOK reports whether e holds the parsed form of its document in
// force (rules, or why its body gives none).
func (e *Entry) parsedOK() bool {
	switch e.Key.Doc() {
	case DocTDMRep:
		return e.TDM != nil || e.TDMErr != nil
	case DocLicense:
		return e.License != nil || e.LicenseErr != nil
	}
	return e.Parsed != nil
}

// fetchConditional fetches key's document, conditionally on prev's
// validators when it has them. A 304 that may not be kept is reported to
// the hooks and answered by an unconditional fetch (a 304 naming another
// ETag) or made a failure (a 304 nobody asked for).
func (e *Enforcer) fetchConditional(ctx context.Context, key Key, prev *Entry) FetchResult {
	v, ok := validatorsOf(prev)
	if !ok {
		return notAsked(e.fetch(ctx, key))
	}
	start := time.Now()
	r := e.fetch(withValidators(ctx, v), key)
	if !r.NotModified || r.ETag == "" || v.ETag == "" || r.ETag == v.ETag {
		return r
	}
	e.fetched(key, r, time.Since(start))
	return notAsked(e.fetch(ctx, key))
}

// notAsked makes a 304 answering an unconditional fetch the failure it is.
func notAsked(r FetchResult) FetchResult {
	if !r.NotModified {
		return r
	}
	return FetchResult{Status: StatusUnreachable, HTTPStatus: http.StatusNotModified, FinalURL: r.FinalURL,
		Err: "HTTP 304 Not Modified answering an unconditional request", ErrKind: FetchStatus}
}

// notModified returns the entry that follows prev after r, a 304 to a
// conditional fetch, at now: prev's copy, parsed form and hash, fresh
// again, with the validators and caching directives r updates.
func (e *Enforcer) notModified(key Key, prev *Entry, r FetchResult, now time.Time) *Entry {
	res := prev.Result
	res.NotModified = true
	if r.ETag != "" {
		res.ETag = r.ETag
	}
	if r.LastModified != "" {
		res.LastModified = r.LastModified
	}
	if r.HasMaxAge || r.NoCache {
		res.MaxAge, res.HasMaxAge, res.NoCache = r.MaxAge, r.HasMaxAge, r.NoCache
	}
	en := &Entry{Key: key, Result: res, FetchedAt: now, Parsed: prev.Parsed,
		TDM: prev.TDM, TDMErr: prev.TDMErr, License: prev.License, LicenseErr: prev.LicenseErr}
	en.Expires = now.Add(e.freshFor(&res))
	return en
}
