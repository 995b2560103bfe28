package enforce

import (
	"cmp"
	"context"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/patrickmn/go-cache"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/heapsize"
)

// MemoryStore is the in-process Store: a github.com/patrickmn/go-cache
// cache of entries keyed by [Key.String], bounded in number and in estimated
// memory, that forgets each entry once its keep has passed. It is safe
// for concurrent use.
//
// The Enforcer keeps the freshness of an entry in [Entry.Expires] and
// stores it for a longer keep, which lets an old robots.txt serve while
// its origin is unreachable. The keep is measured on the real clock
// (go-cache uses [time.Now]), not the Enforcer's Clock.
//
// Get is a read-locked go-cache lookup and writes nothing, so concurrent
// requests never contend on the read path. Expired entries are never
// returned; they are swept (go-cache's DeleteExpired) by a Set at most
// once a minute and whenever a bound is reached. The store starts no
// janitor goroutine, so it needs no Close and may be created freely.
//
// Bounds: when a Set leaves the store above maxEntries entries or
// maxBytes, it sweeps the expired entries and, if still above, evicts
// the entries least recently used (read by Get or stored by Set; among
// equals, those soonest to expire) until the store is at or below 7/8 of
// both bounds, so that the O(n) scan this needs is paid once every
// maxEntries/8 new origins rather than on each Set. Recency is counted in
// Sets: each Set starts a new epoch, and a Get records the current epoch
// in the entry it returns unless it holds it already, so an origin
// crawled all day is kept over one visited once, and a hot entry is
// written at most once per Set. Evict counts the evictions, and
// Refetches the entries stored again after they were evicted (the
// robots.txt fetched again because the bound was too small), as far as
// a table of the last few thousand evicted origins remembers them.
//
// Memory: an entry holds the fetched body (at most robots.max_bytes, 500
// KiB by default) and its parsed rules, which take several times the
// body, most of all for files of thousands of wildcard rules. The store
// charges each entry [entryCost] against its byte bound: the bodies, the
// parsed file's own estimate of its heap ([robots.Robots.MemSize]) and a
// fixed overhead, so that a few origins serving huge robots.txt files
// (wildcard subdomains of a hostile domain) cannot exhaust memory any
// more than many small ones. TestStoreHeapWithinBudget checks the live
// heap of stores filled with hostile files against their bound. The
// bodies are kept, not only the parsed rules, because the admin API
// reports their size and the Redis store serialises them
// ([Entry.Rebuild]).
type MemoryStore struct {
	max      int
	maxBytes int64

	c *cache.Cache // Key.String() → *memItem; no janitor

	// bytes is the sum of the cost of the items in c. It is lowered by
	// c's OnEvicted (Delete, DeleteExpired), which takes no lock, and by
	// Set when it replaces an item (go-cache does not report those).
	bytes atomic.Int64

	// wmu serialises the writers (Set, Delete) so that the old item Set
	// reads is still the one it replaces. Get never takes it.
	wmu       sync.Mutex
	lastSweep time.Time // of c's expired entries; guarded by wmu

	epoch      atomic.Uint64 // incremented by each Set
	evictions  atomic.Int64
	refetches  atomic.Int64
	ghosts     []uint64 // hashes of evicted keys, by hash; guarded by wmu
	ghostsSeed maphash.Seed
}

// memItem is one entry in a [MemoryStore].
type memItem struct {
	e    *Entry
	cost int64
	used atomic.Uint64 // the epoch of its last Get or Set
}

// ghostSlots is the size of the table of evicted origins that
// [MemoryStore.Refetches] looks stored entries up in.
const ghostSlots = 1 << 14

// sweepEvery is how often Set sweeps the expired entries when no bound
// is reached.
const sweepEvery = time.Minute

// NewMemoryStore returns an empty [MemoryStore] that keeps at most
// maxEntries entries (robots.max_entries) whose [entryCost] adds up to at
// most maxBytes (robots.max_cache_mb; the most recently stored entry is
// kept even if it alone exceeds maxBytes). The store is always bounded: a
// bound below 1 is taken as 1.
func NewMemoryStore(maxEntries int, maxBytes int64) *MemoryStore {
	maxEntries = max(maxEntries, 1)
	maxBytes = max(maxBytes, 1)
	// A cleanup interval of 0 starts no janitor goroutine.
	s := &MemoryStore{max: maxEntries, maxBytes: maxBytes, c: cache.New(cache.NoExpiration, 0), lastSweep: time.Now(),
		ghostsSeed: maphash.MakeSeed()}
	s.c.OnEvicted(func(_ string, v any) { s.bytes.Add(-v.(*memItem).cost) })
	return s
}

// mapSlot is what go-cache's map takes per item beyond the item's own
// allocations: its key and value words, control bytes and the spare room
// of a table kept at most 7/8 full, doubled when it grows.
const mapSlot = 2 * (16 + 24 + 1) * 8 / 7

// entryCost is the memory a [MemoryStore] charges for e: the Entry, its
// strings and the store's item, its bodies (a body shared with the parsed
// file counts once) and what its parsed rules hold
// ([robots.Robots.MemSize]).
func entryCost(e *Entry) int64 {
	if e == nil {
		return 0
	}
	n := heapsize.Alloc(unsafe.Sizeof(*e)) + heapsize.Alloc(unsafe.Sizeof(memItem{})) + mapSlot +
		keyCost(e.Key) + resultCost(&e.Result, e.Parsed)
	if e.Good != nil {
		n += heapsize.Alloc(unsafe.Sizeof(*e.Good)) + resultCost(e.Good, e.Parsed)
	}
	return n + e.Parsed.MemSize() + e.TDM.MemSize() + e.License.MemSize()
}

// keyCost is what k holds besides itself, and the string form the
// store keeps it under (the origin itself for a robots.txt key without
// address).
func keyCost(k Key) int64 {
	n := heapsize.Alloc(uintptr(len(k.origin))) + heapsize.Alloc(uintptr(len(k.url)))
	if k.doc != DocRobots || k.addr.IsValid() {
		n += heapsize.Alloc(uintptr(len(k.String())))
	}
	return n
}

// resultCost is what r holds besides itself: its strings and its body,
// unless p shares the body.
func resultCost(r *FetchResult, p *robots.Robots) int64 {
	n := heapsize.Alloc(uintptr(len(r.FinalURL))) + heapsize.Alloc(uintptr(len(r.Err)))
	if b := r.Body; len(b) > 0 {
		if pb := p.Body(); len(pb) == 0 || &pb[0] != &b[0] {
			n += heapsize.Alloc(uintptr(cap(b)))
		}
	}
	return n
}

// Get returns key's entry, if one is kept and its keep has not
// passed.
func (s *MemoryStore) Get(_ context.Context, key Key) (*Entry, bool) {
	v, ok := s.c.Get(key.String())
	if !ok {
		return nil, false
	}
	it := v.(*memItem)
	if ep := s.epoch.Load(); it.used.Load() != ep {
		it.used.Store(ep)
	}
	return it.e, it.e != nil
}

// Set stores e for key and keeps it for keep; keep <= 0 keeps it until
// it is deleted, replaced or evicted. Then, if the store exceeds a bound,
// it drops the expired entries and evicts those least recently used (see
// [MemoryStore]); e itself is never evicted by its own Set.
func (s *MemoryStore) Set(_ context.Context, key Key, e *Entry, keep time.Duration) {
	name := key.String()
	d := keep
	if d <= 0 {
		d = cache.NoExpiration
	}
	it := &memItem{e: e, cost: entryCost(e)}
	it.used.Store(s.epoch.Add(1))
	s.wmu.Lock()
	defer s.wmu.Unlock()
	old, live := s.c.Get(name)
	if !live {
		s.noteRefetch(name)
		// An expired item may still be there, hidden from Get: deleting
		// it has OnEvicted uncharge it. A no-op when there is none.
		s.c.Delete(name)
	}
	s.c.Set(name, it, d)
	s.bytes.Add(it.cost)
	if live {
		s.bytes.Add(-old.(*memItem).cost)
	}
	now := time.Now()
	if s.c.ItemCount() > s.max || s.bytes.Load() > s.maxBytes {
		s.shrink(name, now)
	} else if now.Sub(s.lastSweep) >= sweepEvery {
		s.sweep(now)
	}
}

// sweep drops the expired entries; s.wmu is held.
func (s *MemoryStore) sweep(now time.Time) {
	s.c.DeleteExpired()
	s.lastSweep = now
}

// shrink brings the store back under its bounds, sparing newest (the
// string form of the key just stored); s.wmu is held. OnEvicted takes no
// lock, so calling c.Delete here cannot deadlock.
func (s *MemoryStore) shrink(newest string, now time.Time) {
	s.sweep(now)
	if s.c.ItemCount() <= s.max && s.bytes.Load() <= s.maxBytes {
		return
	}
	type victim struct {
		name string
		used uint64
		exp  int64 // UnixNano; math.MaxInt64: kept until deleted
	}
	items := s.c.Items()
	vs := make([]victim, 0, len(items))
	for k, it := range items {
		if k == newest {
			continue
		}
		exp := it.Expiration
		if exp <= 0 {
			exp = math.MaxInt64
		}
		vs = append(vs, victim{k, it.Object.(*memItem).used.Load(), exp})
	}
	slices.SortFunc(vs, func(a, b victim) int { return cmp.Or(cmp.Compare(a.used, b.used), cmp.Compare(a.exp, b.exp)) })
	// Only the writers remove items and s.wmu is held: n stays exact.
	n := s.c.ItemCount()
	lowN, lowBytes := s.max-s.max/8, s.maxBytes-s.maxBytes/8
	for _, v := range vs {
		if n <= lowN && s.bytes.Load() <= lowBytes {
			break
		}
		s.c.Delete(v.name)
		s.evictions.Add(1)
		s.noteEvicted(v.name)
		n--
	}
	if s.c.ItemCount() > s.max {
		// Entries that expired during the scan (Items skips them).
		s.sweep(now)
	}
}

// noteEvicted remembers that the key named name was evicted; s.wmu is
// held.
func (s *MemoryStore) noteEvicted(name string) {
	if s.ghosts == nil {
		s.ghosts = make([]uint64, ghostSlots)
	}
	h := maphash.String(s.ghostsSeed, name) | 1 // 0 marks a free slot
	s.ghosts[h%ghostSlots] = h
}

// noteRefetch counts a refetch when the key named name, about to be
// stored, was evicted; s.wmu is held.
func (s *MemoryStore) noteRefetch(name string) {
	if s.ghosts == nil {
		return
	}
	h := maphash.String(s.ghostsSeed, name) | 1
	if s.ghosts[h%ghostSlots] == h {
		s.ghosts[h%ghostSlots] = 0
		s.refetches.Add(1)
	}
}

// Evictions returns the number of entries evicted to keep the store
// within its bounds (expired entries swept are not counted).
func (s *MemoryStore) Evictions() int64 { return s.evictions.Load() }

// Refetches returns the number of entries stored again for an origin
// whose entry had been evicted: robots.txt fetches the bounds caused.
func (s *MemoryStore) Refetches() int64 { return s.refetches.Load() }

// Delete forgets key's entry.
func (s *MemoryStore) Delete(_ context.Context, key Key) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.c.Delete(key.String())
}

// Bytes returns the sum of the [entryCost] of the entries kept (expired
// ones not swept yet included).
func (s *MemoryStore) Bytes() int64 { return s.bytes.Load() }

// Len returns the number of entries kept (expired ones not swept yet
// included); after each Set it is at most the store's bound.
func (s *MemoryStore) Len() int { return s.c.ItemCount() }
