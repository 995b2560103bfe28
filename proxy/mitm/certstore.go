package mitm

import (
	"container/list"
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// defaultCertStoreSize is the number of leaf certificates a [CertStore]
// keeps when [NewCertStore] is given no size.
const defaultCertStoreSize = 4096

// certRenewBefore is how long before its expiry a cached leaf certificate
// is replaced by a new one.
const certRenewBefore = 24 * time.Hour

// CertStore caches the leaf certificates robotsgate mints for MITM, by
// host name, so that each host's certificate is signed once and not once
// per connection. It implements goproxy.CertStorage. The cache is bounded:
// beyond its size the least recently used certificate is dropped.
// Concurrent first requests for one host share a single signing. A cached
// certificate is re-minted when it is within a day of expiring. It is
// safe for concurrent use.
type CertStore struct {
	size int
	now  func() time.Time

	mu    sync.Mutex
	lru   *list.List // of *certEntry, most recently used first
	byKey map[string]*list.Element

	group singleflight.Group
	mints atomic.Int64
}

type certEntry struct {
	host string
	cert *tls.Certificate
}

// NewCertStore returns a [CertStore] keeping at most size certificates
// ([defaultCertStoreSize] when size <= 0), using now ([time.Now] when nil) to
// tell when a certificate is about to expire.
func NewCertStore(size int, now func() time.Time) *CertStore {
	if size <= 0 {
		size = defaultCertStoreSize
	}
	if now == nil {
		now = time.Now
	}
	return &CertStore{size: size, now: now, lru: list.New(), byKey: make(map[string]*list.Element)}
}

// Fetch returns the cached certificate for hostname, or calls gen to mint
// one and caches it. It implements goproxy.CertStorage.
func (s *CertStore) Fetch(hostname string, gen func() (*tls.Certificate, error)) (*tls.Certificate, error) {
	if c := s.get(hostname); c != nil {
		return c, nil
	}
	v, err, _ := s.group.Do(hostname, func() (any, error) {
		if c := s.get(hostname); c != nil { // minted while we waited for the group
			return c, nil
		}
		c, err := gen()
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, errors.New("certificate generator returned no certificate")
		}
		s.mints.Add(1)
		s.put(hostname, c)
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tls.Certificate), nil
}

// get returns hostname's certificate if it is cached and not about to
// expire, marking it recently used.
func (s *CertStore) get(hostname string) *tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[hostname]
	if !ok {
		return nil
	}
	e := el.Value.(*certEntry)
	if e.cert.Leaf != nil && !s.now().Before(e.cert.Leaf.NotAfter.Add(-certRenewBefore)) {
		s.lru.Remove(el)
		delete(s.byKey, hostname)
		return nil
	}
	s.lru.MoveToFront(el)
	return e.cert
}

func (s *CertStore) put(hostname string, c *tls.Certificate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[hostname]; ok {
		el.Value.(*certEntry).cert = c
		s.lru.MoveToFront(el)
		return
	}
	s.byKey[hostname] = s.lru.PushFront(&certEntry{host: hostname, cert: c})
	for s.lru.Len() > s.size {
		old := s.lru.Back()
		s.lru.Remove(old)
		delete(s.byKey, old.Value.(*certEntry).host)
	}
}

// Len returns the number of cached certificates.
func (s *CertStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

// Mints returns how many certificates the store has minted (calls of a
// generator that succeeded) since it was created.
func (s *CertStore) Mints() int64 { return s.mints.Load() }
