package enforce

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// MemoryStore is the in-process Store: a map of entries bounded in
// number, that forgets the least recently used entry when a new origin
// would exceed the bound, and each entry once its keep has passed. It is
// safe for concurrent use.
//
// The Enforcer keeps the freshness of an entry in Entry.Expires and
// stores it for a longer keep, which lets an old robots.txt serve while
// its origin is unreachable. The keep is measured on the real clock, not
// the Enforcer's Clock; an entry past its keep is dropped when it is next
// read, or by a later Set that meets it at the cold end of the LRU list.
//
// Memory: an entry holds the fetched body (at most robots.max_bytes, 500
// KiB by default; typical robots.txt files are a few KiB), a second body
// when a stale good copy is kept beside a failed fetch (the two share one
// array when the good copy is the earlier result itself), and the parsed
// rules, which take about as much again as the body. The bodies are kept
// because the admin API reports their size and the Redis store
// serialises them (Entry.Rebuild). So the worst case is about
// MaxEntries × 2 × max_bytes, and the typical one MaxEntries × 10 KiB
// (1 GiB for the default 100000 entries in the worst typical case; tens
// of MiB in practice).
type MemoryStore struct {
	max int

	mu  sync.Mutex
	m   map[string]*list.Element // of *memItem
	lru list.List                // front: most recently used
	now func() time.Time         // real clock; a field for tests
}

// memItem is one origin's entry in a MemoryStore.
type memItem struct {
	origin string
	e      *Entry
	until  time.Time // zero: kept until deleted or evicted
}

// DefaultMaxEntries is the bound of a MemoryStore made by NewMemoryStore.
const DefaultMaxEntries = 100000

// NewMemoryStore returns an empty MemoryStore of at most
// DefaultMaxEntries entries.
func NewMemoryStore() *MemoryStore { return NewMemoryStoreSize(DefaultMaxEntries) }

// NewMemoryStoreSize returns an empty MemoryStore that keeps at most max
// entries; max <= 0 means DefaultMaxEntries (the store is always bounded).
func NewMemoryStoreSize(max int) *MemoryStore {
	if max <= 0 {
		max = DefaultMaxEntries
	}
	return &MemoryStore{max: max, m: make(map[string]*list.Element), now: time.Now}
}

// Get returns origin's entry, if one is kept, and marks it recently used.
func (s *MemoryStore) Get(_ context.Context, origin string) (*Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.m[origin]
	if !ok {
		return nil, false
	}
	it := el.Value.(*memItem)
	if !it.until.IsZero() && !s.now().Before(it.until) {
		s.remove(el)
		return nil, false
	}
	s.lru.MoveToFront(el)
	return it.e, it.e != nil
}

// Set stores e for origin and keeps it for keep; keep <= 0 keeps it until
// it is deleted, replaced or evicted. Storing a new origin in a full
// store first drops the expired entries at the cold end of the LRU list
// (at most a few per call) and then, if still full, the least recently
// used entry.
func (s *MemoryStore) Set(_ context.Context, origin string, e *Entry, keep time.Duration) {
	var until time.Time
	now := s.now()
	if keep > 0 {
		until = now.Add(keep)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.m[origin]; ok {
		it := el.Value.(*memItem)
		it.e, it.until = e, until
		s.lru.MoveToFront(el)
		return
	}
	// Amortised O(1): each entry is removed at most once.
	for i := 0; i < 4 && s.lru.Len() > 0; i++ {
		back := s.lru.Back()
		it := back.Value.(*memItem)
		if it.until.IsZero() || now.Before(it.until) {
			break
		}
		s.remove(back)
	}
	if s.lru.Len() >= s.max {
		s.remove(s.lru.Back())
	}
	s.m[origin] = s.lru.PushFront(&memItem{origin: origin, e: e, until: until})
}

// remove drops el; s.mu is held.
func (s *MemoryStore) remove(el *list.Element) {
	delete(s.m, el.Value.(*memItem).origin)
	s.lru.Remove(el)
}

// Delete forgets origin's entry.
func (s *MemoryStore) Delete(_ context.Context, origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.m[origin]; ok {
		s.remove(el)
	}
}

// Len returns the number of entries kept (expired ones not dropped yet
// included); it is at most the store's bound.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}
