// Package politeness is robotsgate's per-origin politeness: crawl-delay
// pacing, pauses after 503/429 with exponential backoff, and a
// concurrency limit per origin.
package politeness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/rs/zerolog"
)

// Config configures a Politeness. Its limits have no defaults here:
// internal/config holds them (politeness.*) and the proxy passes them.
type Config struct {
	Clock  enforce.Clock // nil means enforce.SystemClock{}
	Pacer  Pacer         // nil means NewMemoryPacer(Clock): this process only
	Pauses Pauses        // nil means NewMemoryPauses(): this process only
	Log    zerolog.Logger

	// IgnoreCrawlDelay disregards the Crawl-delay of robots.txt groups;
	// DefaultDelay, if set, then applies to every origin.
	IgnoreCrawlDelay bool
	// DefaultDelay spaces the requests to origins whose group states no
	// Crawl-delay; 0 means no spacing.
	DefaultDelay time.Duration
	// MaxDelay clamps larger delays; > 0.
	MaxDelay time.Duration
	// MaxWait is the longest a request waits for its turn; a request that
	// would wait longer is refused with [ReasonCrawlDelayWait]. > 0.
	MaxWait time.Duration
	// BackoffStart is the first pause after a 503 or 429 that carries no
	// usable Retry-After; it doubles with each further one. > 0.
	BackoffStart time.Duration
	// BackoffMax caps every pause, including one asked for by Retry-After.
	// > 0.
	BackoffMax time.Duration
	// MaxConcurrency limits the requests to one origin that are admitted
	// and not yet released (waiting for their slot or in flight); 0 means
	// no limit.
	MaxConcurrency int
	// Slots, when set, are the concurrency slots, shared with the
	// Politeness values built before this one with the same Slots (see
	// [Slots]); nil: slots of its own.
	Slots *Slots

	// Report makes Admit decide without acting: it never waits and never
	// holds a concurrency slot, and it returns a Permit together with the
	// Refusal enforcement would have made, for the caller to record.
	// Pacing is still simulated (slots are reserved, not waited for) and
	// pauses are still recorded, so refusals reported are the ones an
	// enforcing proxy would have made for the same traffic.
	Report bool
}

// Reasons of the refusals Politeness makes; their values are part of the
// audit log format.
const (
	ReasonOriginPaused   enforce.Reason = "origin-paused"    // origin asked us to back off (503/429 Retry-After)
	ReasonCrawlDelayWait enforce.Reason = "crawl-delay-wait" // the crawl-delay wait would exceed the maximum
)

// Politeness is robotsgate's per-origin politeness policy: it refuses
// requests to origins that asked it to back off (503/429), spaces the
// requests to each origin by its Crawl-delay in arrival order, and
// optionally limits the requests in flight per origin.
//
// A request goes through Admit before it is forwarded and reports the
// origin's answer through its Permit's Done. Politeness is safe for
// concurrent use.
type Politeness struct {
	cfg Config
	sem *Slots // nil when MaxConcurrency is 0

}

// Refusal says why a request may not go now.
type Refusal struct {
	// Reason is [ReasonOriginPaused] or [ReasonCrawlDelayWait].
	Reason enforce.Reason
	// RetryAfter is how long the client should wait before retrying: the
	// rest of the pause, or the time until the origin's queue has drained.
	RetryAfter time.Duration
	// Detail explains the refusal in a sentence, for a response body or an
	// audit record.
	Detail string
}

// Permit is a request's admission to an origin. Release it when the
// request is over (after [Politeness.Observe] has seen the origin's
// answer); Release is idempotent and safe on a nil Permit.
type Permit struct {
	// Origin is the origin admitted to.
	Origin string
	// Delay is the spacing applied to the origin (0 when none).
	Delay time.Duration
	// Waited is how long Admit waited for the request's turn.
	Waited time.Duration
	// Admitted is when the request was let go.
	Admitted time.Time

	p    *Politeness
	held bool // holds a concurrency slot
	once sync.Once
}

// New returns a Politeness, or an error if cfg is unusable.
func New(cfg Config) (*Politeness, error) {
	if cfg.DefaultDelay < 0 {
		return nil, fmt.Errorf("politeness: DefaultDelay is negative (%v)", cfg.DefaultDelay)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"MaxDelay", cfg.MaxDelay}, {"MaxWait", cfg.MaxWait}, {"BackoffStart", cfg.BackoffStart}, {"BackoffMax", cfg.BackoffMax},
	} {
		if f.d <= 0 {
			return nil, fmt.Errorf("politeness: %s must be positive (is %v)", f.name, f.d)
		}
	}
	if cfg.MaxConcurrency < 0 {
		return nil, fmt.Errorf("politeness: MaxConcurrency is negative (%d)", cfg.MaxConcurrency)
	}
	if cfg.Clock == nil {
		cfg.Clock = enforce.SystemClock{}
	}
	if cfg.Pacer == nil {
		cfg.Pacer = NewMemoryPacer(cfg.Clock)
	}
	if cfg.Pauses == nil {
		cfg.Pauses = NewMemoryPauses()
	}
	if cfg.BackoffStart > cfg.BackoffMax {
		cfg.BackoffStart = cfg.BackoffMax
	}
	if cfg.DefaultDelay > cfg.MaxDelay {
		cfg.DefaultDelay = cfg.MaxDelay
	}
	p := &Politeness{cfg: cfg}
	if cfg.MaxConcurrency > 0 {
		p.sem = cfg.Slots
		if p.sem == nil {
			p.sem = NewSlots()
		}
		p.sem.setMax(cfg.MaxConcurrency)
	}
	return p, nil
}

// Delay returns the spacing Politeness applies to an origin whose
// applicable group states crawlDelay (0 when none): crawlDelay (or
// DefaultDelay when it is 0 or ignored), clamped to MaxDelay.
func (p *Politeness) Delay(crawlDelay time.Duration) time.Duration {
	d := crawlDelay
	if p.cfg.IgnoreCrawlDelay || d < 0 {
		d = 0
	}
	if d == 0 {
		d = p.cfg.DefaultDelay
	}
	return min(d, p.cfg.MaxDelay)
}

// Admit decides whether a request to origin may go, and waits for its
// turn when it may. crawlDelay is the Crawl-delay of the robots.txt group
// that applied (0 when none).
//
// In order: a paused origin refuses at once ([ReasonOriginPaused]); with a
// concurrency limit, the request waits (FIFO) for one of the origin's
// slots; then it reserves its crawl-delay slot and waits until it. If the
// total wait would exceed MaxWait, the request is refused
// ([ReasonCrawlDelayWait]) without having reserved anything. After each wait the
// pause is looked up again: a request queued behind one that was answered
// 503/429 is refused (ReasonOriginPaused, its reserved slot left unused) rather
// than sent to the paused origin.
//
// When err is nil, exactly one of permit and refusal is non-nil, except in
// Report mode, where permit is always non-nil and refusal, if any, is
// what enforcement would have done. err is non-nil only when ctx ended
// while the request waited (err is then ctx.Err()); its reserved slot is
// left unused (see [MemoryPacer]). Failures of the Pacer or Pauses backends
// are logged and fail open: the request goes unpaced.
func (p *Politeness) Admit(ctx context.Context, origin string, crawlDelay time.Duration) (*Permit, *Refusal, error) {
	start := p.cfg.Clock.Now()
	pm := &Permit{Origin: origin, p: p}
	r, err := p.pausedRefusal(ctx, origin)
	if r == nil && err == nil && p.sem != nil && !p.cfg.Report {
		r, err = p.acquireSlot(ctx, pm, crawlDelay)
	}
	if r == nil && err == nil {
		pm.Delay = p.Delay(crawlDelay)
		if pm.Delay > 0 {
			r, err = p.pace(ctx, pm, start)
		}
	}
	switch {
	case err != nil:
		return nil, nil, err
	case r != nil:
		return p.refuse(pm, r)
	}
	pm.Admitted = p.cfg.Clock.Now()
	pm.Waited = pm.Admitted.Sub(start)
	return pm, nil, nil
}

// acquireSlot waits (FIFO, at most MaxWait) for one of the concurrency
// slots of pm's origin and holds it in pm. It returns the refusal when no
// slot came in time, or when the origin was paused meanwhile, and an
// error when ctx ended; pm then holds nothing.
func (p *Politeness) acquireSlot(ctx context.Context, pm *Permit, crawlDelay time.Duration) (*Refusal, error) {
	ok, err := p.sem.acquire(ctx, p.cfg.Clock, pm.Origin, p.cfg.MaxWait)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Refusal{
			Reason:     ReasonCrawlDelayWait,
			RetryAfter: max(p.Delay(crawlDelay), time.Second),
			Detail: fmt.Sprintf("%d requests to %s were in flight for longer than %v",
				p.cfg.MaxConcurrency, pm.Origin, p.cfg.MaxWait),
		}, nil
	}
	pm.held = true
	return p.pausedAfterWait(ctx, pm)
}

// pace reserves pm's crawl-delay slot (pm.Delay after the previous one)
// and, outside Report mode, waits until it; start is when Admit began,
// which bounds the whole wait by MaxWait. It returns the refusal when the
// slot is too far off or the origin was paused during the wait, and an
// error when ctx ended; pm's concurrency slot is then released. A Pacer
// failure is logged and the request goes unpaced.
func (p *Politeness) pace(ctx context.Context, pm *Permit, start time.Time) (*Refusal, error) {
	clk := p.cfg.Clock
	now := clk.Now()
	at, ok, err := p.cfg.Pacer.Reserve(ctx, pm.Origin, pm.Delay, max(p.cfg.MaxWait-now.Sub(start), 0))
	switch {
	case err != nil && ctx.Err() != nil:
		pm.Release()
		return nil, ctx.Err()
	case err != nil:
		p.cfg.Log.Warn().Err(err).Str("origin", pm.Origin).Msg("politeness: pacer failed; not pacing")
		return nil, nil
	case !ok:
		pm.Release()
		return &Refusal{
			Reason:     ReasonCrawlDelayWait,
			RetryAfter: at.Sub(now),
			Detail: fmt.Sprintf("requests to %s are spaced %v apart (crawl-delay) and the wait for the next free slot (%v) exceeds the maximum of %v",
				pm.Origin, pm.Delay, at.Sub(now).Round(time.Millisecond), p.cfg.MaxWait),
		}, nil
	case p.cfg.Report:
		return nil, nil
	}
	wait := at.Sub(clk.Now())
	if wait <= 0 {
		return nil, nil
	}
	select {
	case <-clk.After(wait):
	case <-ctx.Done():
		pm.Release()
		return nil, ctx.Err()
	}
	return p.pausedAfterWait(ctx, pm)
}

// pausedAfterWait looks the pause of pm's origin up again after a wait:
// a request ahead in the queue may have been answered 503/429 meanwhile,
// and this one must then not be sent. When the origin is paused, or ctx
// ended, it releases pm's concurrency slot.
func (p *Politeness) pausedAfterWait(ctx context.Context, pm *Permit) (*Refusal, error) {
	r, err := p.pausedRefusal(ctx, pm.Origin)
	if r != nil || err != nil {
		pm.Release()
	}
	return r, err
}

// pausedRefusal returns the refusal for a paused origin, nil when it is
// not paused (or the lookup failed: logged, failing open), and an error
// only when ctx ended.
func (p *Politeness) pausedRefusal(ctx context.Context, origin string) (*Refusal, error) {
	now := p.cfg.Clock.Now()
	until, paused, err := p.cfg.Pauses.PausedUntil(ctx, origin, now)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.cfg.Log.Warn().Err(err).Str("origin", origin).Msg("politeness: pause lookup failed; not pausing")
		return nil, nil
	}
	if !paused {
		return nil, nil
	}
	return &Refusal{
		Reason:     ReasonOriginPaused,
		RetryAfter: until.Sub(now),
		Detail: fmt.Sprintf("%s answered 503 or 429 and is paused until %s",
			origin, until.UTC().Format(time.RFC3339)),
	}, nil
}

// refuse returns r as Admit's verdict: alone, or in Report mode with a
// Permit (holding nothing) that lets the request go.
func (p *Politeness) refuse(pm *Permit, r *Refusal) (*Permit, *Refusal, error) {
	if !p.cfg.Report {
		return nil, r, nil
	}
	pm.Admitted = p.cfg.Clock.Now()
	return pm, r, nil
}

// Observe records an origin's answer to a request sent at sent (the
// Permit's Admitted time; the zero time when unknown). It returns the end
// of the pause and true when this answer started or extended a pause.
//
//   - 503 or 429 pauses the origin: for the Retry-After value when it is a
//     positive delta-seconds or a future HTTP-date (clamped to BackoffMax);
//     otherwise (absent, malformed, zero or in the past) for BackoffStart,
//     doubled for each further 503/429 of the streak, up to BackoffMax.
//     Answers to requests that were in flight when the pause began do not
//     lengthen the streak.
//   - 2xx ends the pause and the streak, unless the request was sent
//     before the pause began (its answer says nothing about the origin's
//     state since).
//   - Any other status changes nothing.
//
// Pauses and streaks are kept by the Pauses backend ([MemoryPauses], or a
// fleet-wide one in which every replica's 503/429 lengthens the one
// streak and any replica's 2xx ends the pause). A streak that sees no
// further 503/429 is forgotten BackoffMax after its pause ended. Backend
// errors are logged.
func (p *Politeness) Observe(ctx context.Context, origin string, status int, retryAfter string, sent time.Time) (time.Time, bool) {
	switch {
	case status == 503 || status == 429:
		return p.backOff(ctx, origin, retryAfter)
	case status >= 200 && status < 300:
		p.resume(ctx, origin, sent)
	}
	return time.Time{}, false
}

func (p *Politeness) backOff(ctx context.Context, origin, retryAfter string) (time.Time, bool) {
	now := p.cfg.Clock.Now()
	var d time.Duration
	if ra, ok := parseRetryAfter(retryAfter, now); ok && ra > 0 {
		d = min(ra, p.cfg.BackoffMax)
	}
	until, extended, err := p.cfg.Pauses.Backoff(ctx, origin, now, d,
		BackoffPolicy{Start: p.cfg.BackoffStart, Max: p.cfg.BackoffMax})
	if err != nil {
		p.cfg.Log.Warn().Err(err).Str("origin", origin).Msg("politeness: recording pause failed")
	}
	if !extended {
		return time.Time{}, false
	}
	return until, true
}

func (p *Politeness) resume(ctx context.Context, origin string, sent time.Time) {
	if err := p.cfg.Pauses.ResumeSent(ctx, origin, sent); err != nil {
		p.cfg.Log.Warn().Err(err).Str("origin", origin).Msg("politeness: ending pause failed")
	}
}

// Release gives back the permit's concurrency slot, if it holds one.
func (pm *Permit) Release() {
	if pm == nil {
		return
	}
	pm.once.Do(func() {
		if pm.held {
			pm.p.sem.release(pm.Origin)
		}
	})
}
