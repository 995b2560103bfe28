package enforce

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// MemoryStore is the in-process Store: a map of entries bounded in
// number and in estimated memory, that forgets the least recently used
// entries when a new one would exceed a bound, and each entry once its
// keep has passed. It is safe for concurrent use.
//
// The Enforcer keeps the freshness of an entry in Entry.Expires and
// stores it for a longer keep, which lets an old robots.txt serve while
// its origin is unreachable. The keep is measured on the real clock, not
// the Enforcer's Clock; an entry past its keep is dropped when it is next
// read, or by a later Set that meets it at the cold end of the LRU list.
//
// Memory: an entry holds the fetched body (at most robots.max_bytes, 500
// KiB by default) and its parsed rules, which take several times the
// body. Measured by TestEntryCostCoversMemory: about 0.9 KiB for a
// 50-byte robots.txt, 9.3 KiB for a 744-byte one (20 rules) and 66 KiB
// for a 7.5 KiB one (200 rules). The store charges each entry EntryCost, 1 KiB + 12 × its body, against
// its byte bound, so that a few origins serving huge robots.txt files
// (wildcard subdomains of a hostile domain) cannot exhaust memory any
// more than many small ones. The bodies are kept, not only the parsed
// rules, because the admin API reports their size and the Redis store
// serialises them (Entry.Rebuild).
type MemoryStore struct {
	max      int
	maxBytes int64

	bytes int64 // sum of the EntryCost of the entries kept

	mu  sync.Mutex
	m   map[string]*list.Element // of *memItem
	lru list.List                // front: most recently used
	now func() time.Time         // real clock; a field for tests
}

// memItem is one origin's entry in a MemoryStore.
type memItem struct {
	origin string
	e      *Entry
	cost   int64
	until  time.Time // zero: kept until deleted or evicted
}

// Defaults of the bounds of a MemoryStore.
const (
	DefaultMaxEntries    = 100000
	DefaultMaxCacheBytes = 512 << 20
)

// NewMemoryStore returns an empty MemoryStore of at most
// DefaultMaxEntries entries and DefaultMaxCacheBytes.
func NewMemoryStore() *MemoryStore { return NewMemoryStoreSize(0, 0) }

// NewMemoryStoreSize returns an empty MemoryStore that keeps at most
// maxEntries entries whose EntryCost adds up to at most maxBytes (the
// most recently stored entry is kept even if it alone exceeds maxBytes).
// Values <= 0 mean the defaults: the store is always bounded.
func NewMemoryStoreSize(maxEntries int, maxBytes int64) *MemoryStore {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCacheBytes
	}
	return &MemoryStore{max: maxEntries, maxBytes: maxBytes, m: make(map[string]*list.Element), now: time.Now}
}

// EntryCost is the memory a MemoryStore charges for e: an estimate of
// what the entry holds, 1 KiB plus twelve times the robots.txt body in
// force (the body and its parsed rules; see MemoryStore).
func EntryCost(e *Entry) int64 {
	if e == nil {
		return 0
	}
	n := len(e.Result.Body)
	if e.Good != nil && e.Result.Status != StatusOK {
		n += len(e.Good.Body)
	}
	return 1<<10 + 12*int64(n)
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
// it is deleted, replaced or evicted. Then, while the store exceeds a
// bound, it evicts the least recently used entries (after dropping a
// few expired ones from the cold end of the LRU list).
func (s *MemoryStore) Set(_ context.Context, origin string, e *Entry, keep time.Duration) {
	var until time.Time
	now := s.now()
	if keep > 0 {
		until = now.Add(keep)
	}
	cost := EntryCost(e)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.m[origin]; ok {
		it := el.Value.(*memItem)
		s.bytes += cost - it.cost
		it.e, it.cost, it.until = e, cost, until
		s.lru.MoveToFront(el)
	} else {
		// Expired entries at the cold end go first (a few per call).
		for i := 0; i < 4 && s.lru.Len() > 0; i++ {
			back := s.lru.Back()
			it := back.Value.(*memItem)
			if it.until.IsZero() || now.Before(it.until) {
				break
			}
			s.remove(back)
		}
		s.m[origin] = s.lru.PushFront(&memItem{origin: origin, e: e, cost: cost, until: until})
		s.bytes += cost
	}
	// Amortised O(1): each entry is evicted at most once.
	for s.lru.Len() > 1 && (s.lru.Len() > s.max || s.bytes > s.maxBytes) {
		s.remove(s.lru.Back())
	}
}

// remove drops el; s.mu is held.
func (s *MemoryStore) remove(el *list.Element) {
	it := el.Value.(*memItem)
	delete(s.m, it.origin)
	s.bytes -= it.cost
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

// Bytes returns the sum of the EntryCost of the entries kept.
func (s *MemoryStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Len returns the number of entries kept (expired ones not dropped yet
// included); it is at most the store's bound.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}
