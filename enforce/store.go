package enforce

import (
	"context"
	"time"

	"github.com/patrickmn/go-cache"
)

// MemoryStore is the in-process Store, on github.com/patrickmn/go-cache.
// It is safe for concurrent use.
//
// go-cache forgets an item as soon as its lifetime ends (there is no
// stale read), so the Enforcer keeps the freshness of an entry in
// Entry.Expires and stores it for the longer keep, which lets an old
// robots.txt serve while its origin is unreachable. The lifetime of items
// is measured on the real clock, not the Enforcer's Clock.
//
// Each MemoryStore runs a janitor goroutine that drops expired items; it
// has no Close (it stops when the store is garbage-collected), so create
// one per process.
type MemoryStore struct {
	c *cache.Cache
}

// DefaultCleanupInterval is how often a MemoryStore made by NewMemoryStore
// drops expired items.
const DefaultCleanupInterval = 10 * time.Minute

// NewMemoryStore returns an empty MemoryStore that drops expired items
// every DefaultCleanupInterval.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{c: cache.New(cache.NoExpiration, DefaultCleanupInterval)}
}

// Get returns origin's entry, if one is kept.
func (s *MemoryStore) Get(_ context.Context, origin string) (*Entry, bool) {
	v, ok := s.c.Get(origin)
	if !ok {
		return nil, false
	}
	e, ok := v.(*Entry)
	return e, ok && e != nil
}

// Set stores e for origin and keeps it for keep; keep <= 0 keeps it until
// it is deleted or replaced.
func (s *MemoryStore) Set(_ context.Context, origin string, e *Entry, keep time.Duration) {
	if keep <= 0 {
		keep = cache.NoExpiration
	}
	s.c.Set(origin, e, keep)
}

// Delete forgets origin's entry.
func (s *MemoryStore) Delete(_ context.Context, origin string) {
	s.c.Delete(origin)
}

// Len returns the number of entries kept (expired ones the janitor has
// not dropped yet included).
func (s *MemoryStore) Len() int { return s.c.ItemCount() }
