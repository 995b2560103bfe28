package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

// payOrigin is a local origin implementing the pay-per-crawl wire
// contract: a request without a price header gets 402 and its price;
// crawler-exact-price equal to the price, or crawler-max-price at least
// the price, is served with crawler-charged and counted; both headers is
// 400 ConflictingPriceHeaders; the free paths are served free. A price
// header must be covered by a valid Web Bot Auth signature of key
// (checked by the Go verifier; 400 InvalidSignature otherwise).
type payOrigin struct {
	url   string
	key   *signing.Key
	price payment.Amount
	now   func() time.Time // the signatures' verification time

	mu      sync.Mutex
	reqs    []testsupport.SigRequest
	charged int64 // micro-units charged, in price's currency
	charges int
	// answer, when set, answers the request instead (nil: the contract).
	answer func(w http.ResponseWriter, r *http.Request) bool
}

func newPayOrigin(t *testing.T, key *signing.Key, price string) *payOrigin {
	t.Helper()
	o, _ := newPayOriginOn(t, key, price, false)
	return o
}

// newPayOriginOn is newPayOrigin on HTTPS when tlsOn, with its server.
func newPayOriginOn(t *testing.T, key *signing.Key, price string, tlsOn bool) (*payOrigin, *httptest.Server) {
	t.Helper()
	o := &payOrigin{key: key, price: payment.MustParseAmount(price), now: time.Now}
	ts := startTestServer(t, http.HandlerFunc(o.serve), tlsOn)
	o.url = ts.URL
	return o, ts
}

func (o *payOrigin) serve(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	rq := testsupport.SigRequestOf(r, scheme)
	rq.Header = r.Header.Clone()
	o.mu.Lock()
	o.reqs = append(o.reqs, rq)
	answer, price := o.answer, o.price
	o.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		io.WriteString(w, privateRobots)
		return
	}
	if payment.FreeURL(r.URL) {
		io.WriteString(w, "free")
		return
	}
	if answer != nil && answer(w, r) {
		return
	}
	exact, max := r.Header.Get(payment.HeaderExactPrice), r.Header.Get(payment.HeaderMaxPrice)
	if exact != "" || max != "" {
		if code := o.checkSignature(rq); code != "" {
			crawlerError(w, http.StatusBadRequest, code)
			return
		}
	}
	switch {
	case exact != "" && max != "":
		crawlerError(w, http.StatusBadRequest, payment.CodeConflictingPriceHeaders)
	case exact != "":
		a, err := payment.ParseAmount(exact)
		if err != nil || a != price {
			w.Header().Set(payment.HeaderPrice, price.String())
			crawlerError(w, http.StatusPaymentRequired, payment.CodeInvalidCrawlerExactPrice)
			return
		}
		o.serveCharged(w, price)
	case max != "":
		a, err := payment.ParseAmount(max)
		if c, cerr := price.Cmp(a); err != nil || cerr != nil || c > 0 {
			w.Header().Set(payment.HeaderPrice, price.String())
			w.WriteHeader(http.StatusPaymentRequired)
			return
		}
		o.serveCharged(w, price)
	default:
		w.Header().Set(payment.HeaderPrice, price.String())
		w.WriteHeader(http.StatusPaymentRequired)
	}
}

// serveCharged serves the page for price, and counts the charge.
func (o *payOrigin) serveCharged(w http.ResponseWriter, price payment.Amount) {
	o.mu.Lock()
	o.charged += price.Units
	o.charges++
	o.mu.Unlock()
	w.Header().Set(payment.HeaderCharged, price.String())
	io.WriteString(w, "paid page")
}

// checkSignature returns the crawler-error of a priced request whose
// signature does not verify or does not cover its price header.
func (o *payOrigin) checkSignature(rq testsupport.SigRequest) payment.ErrorCode {
	v, err := testsupport.VerifyWebBotAuth(rq, "sig1", o.key.Public(), o.now())
	if err != nil || !slices.Contains(v.Covers, `"`+payment.PriceHeaderComponent(rq.Header)+`"`) {
		return payment.CodeInvalidSignature
	}
	return ""
}

func crawlerError(w http.ResponseWriter, status int, code payment.ErrorCode) {
	w.Header().Set(payment.HeaderError, string(code))
	w.WriteHeader(status)
}

// setPrice changes the origin's price.
func (o *payOrigin) setPrice(p string) {
	o.mu.Lock()
	o.price = payment.MustParseAmount(p)
	o.mu.Unlock()
}

// totals returns the charges made and their sum in micro-units.
func (o *payOrigin) totals() (int, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.charges, o.charged
}

// received returns the requests for path the origin received.
func (o *payOrigin) received(path string) []testsupport.SigRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []testsupport.SigRequest
	for _, r := range o.reqs {
		if p, _, _ := strings.Cut(r.Target, "?"); p == path {
			out = append(out, r)
		}
	}
	return out
}

// payProxy is a Server paying in pay mode, with its audit and a client.
type payProxy struct {
	srv    *Server
	addr   string
	audit  *memAudit
	client *http.Client
}

// newPayProxy starts a Server whose payment settings are pay, max_price
// maxPrice and budgets, signing with keyFile, with deps' Wallet and Clock
// (nil: its own); mod changes the configuration further.
func newPayProxy(t *testing.T, keyFile, maxPrice string, deps Deps, mod func(*config.Config), budgets ...payment.Budget) *payProxy {
	t.Helper()
	cfg := testConfig(t)
	withSigning(&cfg, keyFile)
	cfg.Payment = config.PaymentConfig{Mode: config.PaymentPay, MaxPrice: payment.MustParseAmount(maxPrice), Budgets: budgets}
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	ma := &memAudit{}
	srv, err := buildServer(t, cfg, enforce.Config{}, Deps{Auditor: audit.New(ma), Wallet: deps.Wallet, Clock: deps.Clock, Log: zerolog.Nop(),
		Load: func() (config.Config, error) { return cfg, nil }})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveLoopback(t, srv)
	ctr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableCompression: true, MaxIdleConnsPerHost: 64}
	t.Cleanup(ctr.CloseIdleConnections)
	return &payProxy{srv: srv, addr: addr, audit: ma, client: &http.Client{Transport: ctr, Timeout: testTimeout}}
}

// clientAs returns a client of the proxy authenticating as user:pass.
func (p *payProxy) clientAs(t *testing.T, user, pass string) *http.Client {
	ctr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.addr, User: url.UserPassword(user, pass)})}
	t.Cleanup(ctr.CloseIdleConnections)
	return &http.Client{Transport: ctr, Timeout: testTimeout}
}

// paidRecords returns the ledger's records (decision paid) and the sum
// of their charges, in micro-units.
func paidRecords(t *testing.T, ma *memAudit) ([]map[string]any, int64) {
	t.Helper()
	var out []map[string]any
	var sum int64
	for _, rec := range ma.Records(t) {
		if rec["decision"] != audit.DecisionPaid {
			continue
		}
		out = append(out, rec)
		p, _ := rec["payment"].(map[string]any)
		c, _ := p["charged"].(string)
		a, err := payment.ParseAmount(p["currency"].(string) + " " + c)
		if err != nil {
			t.Fatalf("ledger record with an unreadable charge: %v", rec)
		}
		sum += a.Units
	}
	return out, sum
}

// recordOf returns the audit record of ma for URL u with reason, nil when none.
func recordOf(t *testing.T, ma *memAudit, u, reason string) map[string]any {
	t.Helper()
	for _, rec := range ma.Records(t) {
		if rec["url"] == u && rec["reason"] == reason {
			return rec
		}
	}
	return nil
}

// setAnswer sets the origin's answer override (nil: the contract).
func (o *payOrigin) setAnswer(f func(w http.ResponseWriter, r *http.Request) bool) {
	o.mu.Lock()
	o.answer = f
	o.mu.Unlock()
}
