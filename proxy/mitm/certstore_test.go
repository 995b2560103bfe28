package mitm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLeaf returns a generator of certificates expiring at notAfter that
// counts its calls.
func fakeLeaf(calls *atomic.Int64, notAfter time.Time) func() (*tls.Certificate, error) {
	return func() (*tls.Certificate, error) {
		calls.Add(1)
		return &tls.Certificate{Leaf: &x509.Certificate{NotAfter: notAfter}}, nil
	}
}

func TestCertStoreMintsOncePerHost(t *testing.T) {
	s := NewCertStore(0, fixedNow)
	var calls atomic.Int64
	gen := fakeLeaf(&calls, caTestNow.Add(365*24*time.Hour))

	// 32 concurrent first connections to one host share one signing.
	var wg sync.WaitGroup
	certs := make([]*tls.Certificate, 32)
	for i := range certs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.Fetch("a.test", gen)
			if err != nil {
				t.Error(err)
			}
			certs[i] = c
		}()
	}
	wg.Wait()
	for _, c := range certs {
		if c != certs[0] {
			t.Fatal("concurrent fetches got different certificates")
		}
	}
	for range 10 {
		if _, err := s.Fetch("a.test", gen); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Fetch("b.test", gen); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("generator called %d times for 2 hosts, want 2", got)
	}
	if s.Mints() != 2 || s.Len() != 2 {
		t.Fatalf("Mints=%d Len=%d, want 2 and 2", s.Mints(), s.Len())
	}
}

func TestCertStoreBoundedLRU(t *testing.T) {
	s := NewCertStore(3, fixedNow)
	var calls atomic.Int64
	gen := fakeLeaf(&calls, caTestNow.Add(365*24*time.Hour))
	fetch := func(h string) {
		t.Helper()
		if _, err := s.Fetch(h, gen); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		fetch(fmt.Sprintf("h%d.test", i))
	}
	fetch("h0.test") // h0 becomes most recent; h1 is now the oldest
	fetch("h3.test") // evicts h1
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want the bound 3", s.Len())
	}
	before := calls.Load()
	fetch("h0.test")
	fetch("h2.test")
	fetch("h3.test")
	if calls.Load() != before {
		t.Fatal("a recently used certificate was evicted")
	}
	fetch("h1.test")
	if calls.Load() != before+1 {
		t.Fatal("the least recently used certificate was not evicted")
	}
}

func TestCertStoreRenewsNearExpiry(t *testing.T) {
	now := caTestNow
	s := NewCertStore(0, func() time.Time { return now })
	var calls atomic.Int64
	gen := fakeLeaf(&calls, caTestNow.Add(48*time.Hour))
	s.Fetch("a.test", gen)
	now = now.Add(23 * time.Hour) // 25h left: still served from cache
	s.Fetch("a.test", gen)
	if calls.Load() != 1 {
		t.Fatalf("renewed too early: %d mints", calls.Load())
	}
	now = now.Add(2 * time.Hour) // 23h left: renewed
	s.Fetch("a.test", gen)
	if calls.Load() != 2 {
		t.Fatalf("certificate close to expiry was served from cache: %d mints", calls.Load())
	}
}

func TestCertStoreErrorsNotCached(t *testing.T) {
	s := NewCertStore(0, fixedNow)
	boom := errors.New("boom")
	if _, err := s.Fetch("a.test", func() (*tls.Certificate, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if _, err := s.Fetch("a.test", func() (*tls.Certificate, error) { return nil, nil }); err == nil {
		t.Fatal("nil certificate accepted")
	}
	var calls atomic.Int64
	if _, err := s.Fetch("a.test", fakeLeaf(&calls, caTestNow.Add(time.Hour*1000))); err != nil || calls.Load() != 1 {
		t.Fatalf("after failures: err=%v calls=%d", err, calls.Load())
	}
}
