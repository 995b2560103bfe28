package enforce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/singleflight"
)

// Config configures an Enforcer. The settings have no defaults here:
// internal/config holds them (robots.*) and cmd/robotsgate passes them.
type Config struct {
	Fetcher Fetcher // required
	Store   Store   // required
	Clock   Clock   // nil means SystemClock{}
	Log     zerolog.Logger
	Hooks   Hooks // optional observability callbacks
	// Documents keeps the documents decisions used; nil keeps none
	// (their hashes are still reported).
	Documents Documents

	TTL               time.Duration // robots.txt freshness, > 0; Cache-Control max-age is clamped to [MinTTL, TTL], never above MaxFreshness
	MinTTL            time.Duration // >= 0; 0 puts no floor under max-age; no-store/no-cache responses are fresh for MinTTL
	UnreachableWindow time.Duration // how long an unreachable origin keeps its last good copy / stays disallowed; > 0
	RetryMin          time.Duration // first retry after an unreachable fetch, > 0; doubles per failure (origins not reached: see notReachedRetry)
	RetryMax          time.Duration // retry backoff cap, >= RetryMin
	MaxBytes          int           // robots.txt parse limit, > 0
	FetchTimeout      time.Duration // bound of one fetch, detached from the caller's ctx; > 0
}

// Hooks are optional callbacks for metrics. A nil func is not called.
// They run synchronously on the deciding goroutine and must be fast and
// safe for concurrent use.
type Hooks struct {
	// Fetched is called after each robots.txt fetch this process made,
	// with the origin, the result and how long it took (on the real
	// clock).
	Fetched func(origin string, r FetchResult, took time.Duration)
	// TDMFetched is Fetched for an origin's /.well-known/tdmrep.json.
	TDMFetched func(origin string, r FetchResult, took time.Duration)
	// LicenseFetched is Fetched for an RSL license document, with its URL.
	LicenseFetched func(url string, r FetchResult, took time.Duration)
	// CacheLookup is called once per Decide that needs the origin's
	// rules: hit reports whether a fresh entry was cached (an expired
	// copy served while it is re-fetched is a miss). Quiet decisions and
	// Entry, which serve queries rather than proxied requests, do not
	// call it.
	CacheLookup func(origin string, hit bool)
}

// notReachedRetry is the first retry after a fetch that never reached
// the origin ([FetchErrorKind.NotReached]): it doubles per failure up to
// RetryMin, since such a failure costs the origin nothing.
const notReachedRetry = 10 * time.Second

// Enforcer decides whether requests may go. It is safe for concurrent use.
type Enforcer struct {
	fetcher Fetcher
	store   Store
	coord   Coordinator // store as a Coordinator, nil when it is not one
	clock   Clock
	log     zerolog.Logger
	hooks   Hooks
	docs    Documents

	ttl, minTTL, window, retryMin, retryMax, fetchTimeout time.Duration
	maxBytes                                              int

	group singleflight.Group

	mu           sync.Mutex
	revalidating map[Key]struct{} // entries being re-fetched in the background
	closed       bool             // Close was called: no new revalidation starts
	background   sync.WaitGroup   // the revalidations under way
}

// New returns an Enforcer, or an error if cfg is unusable.
func New(cfg Config) (*Enforcer, error) {
	if cfg.Fetcher == nil {
		return nil, errors.New("enforce: Config.Fetcher is required")
	}
	if cfg.Store == nil {
		return nil, errors.New("enforce: Config.Store is required")
	}
	if cfg.MinTTL < 0 {
		return nil, fmt.Errorf("enforce: Config.MinTTL is negative (%v)", cfg.MinTTL)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"TTL", cfg.TTL}, {"UnreachableWindow", cfg.UnreachableWindow},
		{"RetryMin", cfg.RetryMin}, {"RetryMax", cfg.RetryMax}, {"FetchTimeout", cfg.FetchTimeout},
	} {
		if d.v <= 0 {
			return nil, fmt.Errorf("enforce: Config.%s must be positive (is %v)", d.name, d.v)
		}
	}
	if cfg.MaxBytes <= 0 {
		return nil, fmt.Errorf("enforce: Config.MaxBytes must be positive (is %d)", cfg.MaxBytes)
	}
	e := &Enforcer{
		fetcher:      cfg.Fetcher,
		store:        cfg.Store,
		clock:        cfg.Clock,
		log:          cfg.Log,
		hooks:        cfg.Hooks,
		docs:         cfg.Documents,
		ttl:          cfg.TTL,
		minTTL:       cfg.MinTTL,
		window:       cfg.UnreachableWindow,
		retryMin:     cfg.RetryMin,
		retryMax:     cfg.RetryMax,
		fetchTimeout: cfg.FetchTimeout,
		maxBytes:     cfg.MaxBytes,
		revalidating: make(map[Key]struct{}),
	}
	if e.minTTL > e.ttl {
		return nil, fmt.Errorf("enforce: Config.MinTTL (%v) exceeds TTL (%v)", e.minTTL, e.ttl)
	}
	if e.retryMin > e.retryMax {
		return nil, fmt.Errorf("enforce: Config.RetryMin (%v) exceeds RetryMax (%v)", e.retryMin, e.retryMax)
	}
	if c, ok := e.store.(Coordinator); ok {
		e.coord = c
	}
	if e.clock == nil {
		e.clock = SystemClock{}
	}
	return e, nil
}

// Entry returns origin's robots.txt entry, fetching it if there is no
// fresh one. It fails only when ctx ends before the fetch does (or the
// fetch panicked); a failed fetch is an Entry whose Result says so.
// It does not report to [Hooks.CacheLookup].
//
// With an address in ctx ([WithAddress]), it is the entry of the copy
// fetched from that address.
func (e *Enforcer) Entry(ctx context.Context, origin string) (*Entry, error) {
	key := RobotsKey(origin, addressOf(ctx))
	en, ok := e.store.Get(ctx, key)
	if ok && e.clock.Now().Before(en.Expires) {
		return en, nil
	}
	return e.refresh(ctx, key)
}

// Cached returns origin's entry without fetching, fresh or not: the one
// fetched from the address of ctx ([WithAddress]) when it names one.
func (e *Enforcer) Cached(ctx context.Context, origin string) (*Entry, bool) {
	return e.store.Get(ctx, RobotsKey(origin, addressOf(ctx)))
}

// Purge forgets origin's robots.txt (the copy fetched from the address of
// ctx, [WithAddress], when it names one); the next request fetches it
// again. A fetch already under way is not interrupted.
func (e *Enforcer) Purge(ctx context.Context, origin string) {
	e.store.Delete(ctx, RobotsKey(origin, addressOf(ctx)))
}

// refresh returns a fresh entry for key, fetching it once for all
// concurrent callers. The fetch runs detached from ctx, bounded by
// [FetchTimeout]; the caller stops waiting when ctx ends.
func (e *Enforcer) refresh(ctx context.Context, key Key) (*Entry, error) {
	detached := context.WithoutCancel(ctx)
	name := key.String() // the single flight's and the logs' name of the entry
	ch := e.group.DoChan(name, func() (v any, err error) {
		defer func() {
			// A panic here would crash the process (singleflight
			// re-panics on a new goroutine): make it an error.
			if p := recover(); p != nil {
				err = fmt.Errorf("enforce: internal error fetching %s/robots.txt: %v", name, p)
				e.log.Error().Str("origin", name).Interface("panic", p).Msg("robots.txt fetch panicked")
			}
		}()
		fctx, cancel := context.WithTimeout(detached, e.fetchTimeout)
		defer cancel()
		if e.coord != nil {
			en, err := e.coord.Once(fctx, key, func(ctx context.Context, st Store) *Entry {
				return e.fetchAndStore(ctx, st, key)
			})
			if err == nil && en != nil {
				return en, nil
			}
			if err != nil && !errors.Is(err, ErrCoordinatorUnavailable) { // outages are logged by the Coordinator
				e.log.Warn().Err(err).Str("origin", name).Msg("robots.txt fetch coordination failed; fetching locally")
			}
		}
		return e.fetchAndStore(fctx, e.store, key), nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Entry), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s/robots.txt: %w", name, context.Cause(ctx))
	}
}

// fetchAndStore returns key's entry from st if it is fresh
// (someone else just fetched it), else fetches it, stores the new entry
// in st and returns it. It is the fetch function given to [Coordinator.Once].
func (e *Enforcer) fetchAndStore(ctx context.Context, st Store, key Key) *Entry {
	prev, ok := st.Get(ctx, key)
	if ok && e.clock.Now().Before(prev.Expires) {
		return prev
	}
	start := time.Now()
	r := e.fetchConditional(ctx, key, prev)
	took := time.Since(start)
	if r.Status == "" {
		r.Status = StatusUnreachable
		if r.Err == "" {
			r.Err = "fetcher returned no status"
		}
		if r.ErrKind == "" {
			r.ErrKind = FetchOther
		}
	}
	e.fetched(key, r, took)
	now := e.clock.Now()
	en := e.next(key, prev, r, now)
	e.logFetch(en, took)
	// A 4xx entry has nothing to serve once expired; the others keep
	// their good copy or their unreachable streak for the window.
	keep := en.Expires.Sub(now)
	if en.Result.Status != StatusUnavailable {
		keep += e.window
	}
	st.Set(ctx, key, en, keep)
	return en
}

// fetched reports a fetch of key's document to its hook.
func (e *Enforcer) fetched(key Key, r FetchResult, took time.Duration) {
	f, name := e.hooks.Fetched, key.Origin()
	switch key.Doc() {
	case DocTDMRep:
		f = e.hooks.TDMFetched
	case DocLicense:
		f, name = e.hooks.LicenseFetched, key.URL()
	}
	if f != nil {
		f(name, r, took)
	}
}

// next returns the entry that follows prev (nil when none) after a fetch
// that got r at now.
func (e *Enforcer) next(key Key, prev *Entry, r FetchResult, now time.Time) *Entry {
	if r.NotModified {
		if _, ok := validatorsOf(prev); ok {
			return e.notModified(key, prev, r, now)
		}
		r = notAsked(r)
	}
	en := &Entry{Key: key, Result: r, FetchedAt: now}
	switch r.Status {
	case StatusOK, StatusUnavailable:
		en.Expires = now.Add(e.freshFor(&r))
		if r.Status == StatusOK {
			en.Rebuild(e.maxBytes)
		}
		return en
	}
	// Unreachable.
	en.Failures, en.UnreachableSince = 1, now
	if prev != nil && prev.Result.Status == StatusUnreachable {
		en.Failures = prev.Failures + 1
		if !prev.UnreachableSince.IsZero() {
			en.UnreachableSince = prev.UnreachableSince
		}
	}
	en.Expires = now.Add(e.retryIn(r.ErrKind, en.Failures))
	if now.Sub(en.UnreachableSince) > e.window {
		return en // treated as unavailable: the old copy is dropped
	}
	file := key.Doc() != DocRobots // a policy file other than robots.txt, which Parsed never holds
	switch {
	case prev == nil:
	case prev.Result.Status == StatusOK && prev.Parsed != nil:
		good := prev.Result
		en.Good, en.GoodAt, en.Parsed = &good, prev.FetchedAt, prev.Parsed
	case prev.Good != nil && prev.Parsed != nil:
		en.Good, en.GoodAt, en.Parsed = prev.Good, prev.GoodAt, prev.Parsed
	case prev.Result.Status == StatusOK && file:
		good := prev.Result
		en.Good, en.GoodAt = &good, prev.FetchedAt
	case prev.Good != nil && file:
		en.Good, en.GoodAt = prev.Good, prev.GoodAt
	}
	if en.Good != nil && file {
		en.TDM, en.TDMErr = prev.TDM, prev.TDMErr
		en.License, en.LicenseErr = prev.License, prev.LicenseErr
	}
	return en
}

// retryIn is how long after the n-th consecutive failure, of kind k, the
// robots.txt is fetched again: from [notReachedRetry] up to RetryMin when
// the origin was not reached, from RetryMin up to RetryMax otherwise.
func (e *Enforcer) retryIn(k FetchErrorKind, n int) time.Duration {
	if k.NotReached() {
		return Backoff(min(notReachedRetry, e.retryMin), e.retryMin, n)
	}
	return Backoff(e.retryMin, e.retryMax, n)
}

// logFetch logs a fetch failure at warn for operators.
func (e *Enforcer) logFetch(en *Entry, took time.Duration) {
	r := &en.Result
	switch r.Status {
	case StatusUnreachable:
		ev := e.log.Warn().Str("origin", en.Key.String()).Int("http_status", r.HTTPStatus).
			Str("error", r.Err).Str("error_kind", string(r.ErrKind)).Int("failures", en.Failures).
			Time("unreachable_since", en.UnreachableSince).Int64("retry_in_ms", en.Expires.Sub(en.FetchedAt).Milliseconds()).
			Bool("stale_copy", en.Good != nil).Int64("took_ms", took.Milliseconds())
		ev.Msg(en.Key.Doc().String() + " unreachable")
	case StatusUnavailable:
		e.log.Debug().Str("origin", en.Key.String()).Int("http_status", r.HTTPStatus).Str("error", r.Err).
			Msg("robots.txt unavailable: all URLs allowed")
	default:
		if r.Truncated {
			e.log.Info().Str("origin", en.Key.String()).Int("max_bytes", e.maxBytes).
				Msg("robots.txt longer than the limit: the rest is ignored")
		}
	}
}
