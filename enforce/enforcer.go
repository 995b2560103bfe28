package enforce

import (
	"context"
	"net/url"
	"time"

	"github.com/rs/zerolog"
)

// Config configures an Enforcer. Zero durations take the documented defaults.
type Config struct {
	Fetcher Fetcher // required
	Store   Store   // default: NewMemoryStore()
	Clock   Clock   // default: SystemClock{}
	Log     zerolog.Logger

	TTL               time.Duration // robots.txt freshness, default 24h; Cache-Control max-age is clamped to [MinTTL, TTL]
	MinTTL            time.Duration // default 1m
	UnreachableWindow time.Duration // how long an unreachable origin keeps its last good copy / stays disallowed; default 30 days
	RetryMin          time.Duration // first retry after an unreachable fetch, default 1m; doubles per failure
	RetryMax          time.Duration // retry backoff cap, default 1h
	MaxBytes          int           // robots.txt parse limit, default robots.DefaultMaxBytes
	FetchTimeout      time.Duration // bound of one fetch, detached from the caller's ctx; default 10s
}

// Enforcer decides whether requests may go. It is safe for concurrent use.
type Enforcer struct {
	// TODO(enforce)
}

// New returns an Enforcer, or an error if cfg is unusable.
func New(cfg Config) (*Enforcer, error) { panic("TODO(enforce)") }

// Decide returns the verdict for fetching u as the crawler whose product
// token is agent ("" when none is known: only the "*" group applies). It
// fetches the origin's robots.txt when no fresh copy is cached;
// concurrent callers for one origin share a single fetch. Decide never
// returns an error: a failure to learn the rules is itself a verdict
// (ReasonUnreachable).
func (e *Enforcer) Decide(ctx context.Context, u *url.URL, agent string) Decision {
	panic("TODO(enforce)")
}

// Entry returns origin's robots.txt entry, fetching it if there is no
// fresh one.
func (e *Enforcer) Entry(ctx context.Context, origin string) (*Entry, error) {
	panic("TODO(enforce)")
}

// Cached returns origin's entry without fetching.
func (e *Enforcer) Cached(ctx context.Context, origin string) (*Entry, bool) {
	panic("TODO(enforce)")
}

// Purge forgets origin's robots.txt; the next request fetches it again.
func (e *Enforcer) Purge(ctx context.Context, origin string) { panic("TODO(enforce)") }

// Origin returns the origin of u as RFC 9309 §2.3 scopes robots.txt:
// scheme + "://" + lower-cased host + (":" + port unless it is the
// scheme's default). It fails for URLs without a scheme or host.
func Origin(u *url.URL) (string, error) { panic("TODO(enforce)") }
