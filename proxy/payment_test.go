package proxy

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/internal/testsupport"
	"github.com/robotsgate/robotsgate/proxy/answer"
)

// TestPaymentPays: a 402 quoting USD 0.01 under max_price USD 0.02 is
// paid by one retry with crawler-exact-price, signed with the header
// covered (both verifiers); the client gets the paid page, the ledger
// records it; the origin, having quoted, gets crawler-max-price up front
// on the next URL; the free paths and robotsgate's robots.txt fetch carry
// no price header, and a refused URL never reaches the origin.
func TestPaymentPays(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil)
	resp, body := get(t, p.client, o.url+"/a")
	if resp.StatusCode != http.StatusOK || body != "paid page" {
		t.Fatalf("GET /a: %d %q", resp.StatusCode, body)
	}
	if got := resp.Header.Get(payment.HeaderCharged); got != "USD 0.01" {
		t.Errorf("crawler-charged %q", got)
	}
	reqs := o.received("/a")
	if len(reqs) != 2 || reqs[0].Header.Get(payment.HeaderExactPrice) != "" || reqs[1].Header.Get(payment.HeaderExactPrice) != "USD 0.01" {
		t.Fatalf("the origin saw %d requests for /a: %v", len(reqs), reqs)
	}
	resp, _ = get(t, p.client, o.url+"/b")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /b: %d", resp.StatusCode)
	}
	b := one(t, "/b", o.received("/b"))
	if b.Header.Get(payment.HeaderMaxPrice) != "USD 0.01" {
		t.Errorf("/b without crawler-max-price up front: %v", b.Header)
	}
	for _, path := range []string{"/robots.txt", "/sitemap.xml"} {
		get(t, p.client, o.url+path)
		for _, r := range o.received(path) {
			if payment.PriceHeaderComponent(r.Header) != "" {
				t.Errorf("%s carried a price header: %v", path, r.Header)
			}
		}
	}
	if resp, _ := get(t, p.client, o.url+"/private"); resp.StatusCode != http.StatusForbidden || len(o.received("/private")) != 0 {
		t.Errorf("/private: %d, origin saw %d", resp.StatusCode, len(o.received("/private")))
	}
	recs, sum := paidRecords(t, p.audit)
	if n, charged := o.totals(); len(recs) != 2 || n != 2 || sum != charged {
		t.Errorf("ledger: %d records summing %d; origin: %d charges of %d", len(recs), sum, n, charged)
	}
	if rec := recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaid)); rec == nil ||
		rec["payment"].(map[string]any)["quoted"] != "0.01" || rec["user"] != nil && rec["user"] != "" {
		t.Errorf("ledger record of /a: %v", rec)
	}
	ex := testsupport.Exposition(p.srv.metrics.Handler())
	if testsupport.MetricValue(t, ex, `robotsgate_payment_charged_total{currency="USD",identity=""}`) != 0.02 {
		t.Errorf("charged metric:\n%s", ex)
	}
	verifySigned(t, []signedBy{{reqs[1], "sig1", k}, {b, "sig1", k}})
}

// TestPaymentNotPaid: over the cap, the client gets the origin's 402,
// marked payment-over-cap; in report mode the 402 passes unchanged and
// is audited with its price; off changes nothing; an x402 challenge is
// never paid.
func TestPaymentNotPaid(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	cases := []struct {
		name, price, mode, header, reason string
	}{
		{"over the cap", "USD 0.03", "pay", "payment-over-cap", "payment-over-cap"},
		{"another currency", "EUR 0.01", "pay", "payment-over-cap", "payment-over-cap"},
		{"report", "USD 0.01", "report", "", "payment-quoted"},
		{"off", "USD 0.01", "off", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newPayOrigin(t, k, c.price)
			p := newPayProxy(t, kp, "USD 0.02", Deps{}, func(cfg *config.Config) { cfg.Payment.Mode = config.PaymentMode(c.mode) })
			resp, _ := get(t, p.client, o.url+"/a")
			if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(payment.HeaderPrice) != c.price {
				t.Fatalf("GET /a: %d %v", resp.StatusCode, resp.Header)
			}
			if got := resp.Header.Get(answer.HeaderDecision); got != c.header {
				t.Errorf("X-Robotsgate-Decision %q, want %q", got, c.header)
			}
			if c.header != "" && !strings.Contains(resp.Header.Get(answer.HeaderProxyStatus), "http_request_denied") {
				t.Errorf("Proxy-Status %q", resp.Header.Get(answer.HeaderProxyStatus))
			}
			if n, _ := o.totals(); n != 0 || len(o.received("/a")) != 1 {
				t.Errorf("origin: %d charges, %d requests", n, len(o.received("/a")))
			}
			rec := recordOf(t, p.audit, o.url+"/a", c.reason)
			if (c.reason != "") != (rec != nil) {
				t.Errorf("audit record %v, want reason %q", rec, c.reason)
			}
		})
	}
	t.Run("x402", func(t *testing.T) {
		o := newPayOrigin(t, k, "USD 0.01")
		o.answer = func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("WWW-Authenticate", `Payment realm="x", amount="5"`)
			w.WriteHeader(http.StatusPaymentRequired)
			return true
		}
		p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil)
		resp, _ := get(t, p.client, o.url+"/a")
		if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(answer.HeaderDecision) != string(answer.ReasonPaymentUnsupported) {
			t.Fatalf("GET /a: %d %v", resp.StatusCode, resp.Header)
		}
		rec := recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaymentUnsupported))
		if rec == nil || rec["payment"].(map[string]any)["scheme"] != payment.SchemePayment {
			t.Errorf("audit record %v", rec)
		}
	})
}

// TestPaymentErrorCodes: each crawler-error code of the paid retry is
// audited with its code, nothing is paid and the reservation is
// released; a re-quote is followed once, at the new price; InternalError
// pauses the origin.
func TestPaymentErrorCodes(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	for code, info := range payment.Codes() {
		t.Run(string(code), func(t *testing.T) {
			o := newPayOrigin(t, k, "USD 0.01")
			o.answer = func(w http.ResponseWriter, r *http.Request) bool {
				if r.Header.Get(payment.HeaderExactPrice) == "" {
					return false
				}
				if info.Status == http.StatusPaymentRequired {
					w.Header().Set(payment.HeaderPrice, "USD 0.01")
				}
				crawlerError(w, info.Status, code)
				return true
			}
			p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil, payment.Budget{Scope: payment.ScopeFleet, Period: payment.PeriodDay,
				Limit: payment.MustParseAmount("USD 0.01")})
			resp, _ := get(t, p.client, o.url+"/a")
			if resp.StatusCode != info.Status || resp.Header.Get(payment.HeaderError) != string(code) {
				t.Fatalf("GET /a: %d %v", resp.StatusCode, resp.Header)
			}
			wantTries := 2
			if info.Action == payment.ActionRequote {
				wantTries = 3 // once re-quoted
			}
			if got := len(o.received("/a")); got != wantTries {
				t.Errorf("origin saw %d requests, want %d", got, wantTries)
			}
			rec := recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaymentError))
			if rec == nil || rec["payment"].(map[string]any)["code"] != string(code) {
				t.Fatalf("audit record %v", rec)
			}
			if recs, _ := paidRecords(t, p.audit); len(recs) != 0 {
				t.Errorf("paid: %v", recs)
			}
			o.setAnswer(nil) // the budget covers one payment: released, it is free again
			resp, _ = get(t, p.client, o.url+"/b")
			if want := http.StatusOK; code == payment.CodeInternalError {
				if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(answer.HeaderDecision) != "origin-paused" {
					t.Errorf("after InternalError: %d %s, want 503 origin-paused", resp.StatusCode, resp.Header.Get(answer.HeaderDecision))
				}
			} else if resp.StatusCode != want {
				t.Errorf("GET /b: %d, want %d (the reservation was released)", resp.StatusCode, want)
			}
		})
	}
}

// TestPaymentUnconfirmed: a paid retry's 2xx without crawler-charged is
// the client's, audited payment-unconfirmed, and its reservation is
// released.
func TestPaymentUnconfirmed(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	o.setAnswer(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(payment.HeaderExactPrice) == "" {
			return false
		}
		io.WriteString(w, "served, no charge said")
		return true
	})
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil, payment.Budget{Scope: payment.ScopeFleet, Period: payment.PeriodDay,
		Limit: payment.MustParseAmount("USD 0.01")})
	if resp, _ := get(t, p.client, o.url+"/a"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /a: %d", resp.StatusCode)
	}
	if rec := recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaymentUnconfirmed)); rec == nil {
		t.Errorf("no payment-unconfirmed record: %v", p.audit.Records(t))
	}
	o.setAnswer(nil) // released: the budget pays the next one
	if resp, _ := get(t, p.client, o.url+"/b"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /b: %d, want 200 (the reservation was released)", resp.StatusCode)
	}
}

// TestPaymentClientGoneDuringRetry: a client that leaves while the paid
// retry is at the origin does not cancel it. The origin may charge a
// request it has received; were the retry cancelled, robotsgate would
// release the reservation, the charge would reach neither the ledger nor
// the budget, and a client leaving at that moment again and again would
// spend past every budget. The retry's answer is read and settled.
func TestPaymentClientGoneDuringRetry(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	arrived := make(chan struct{})
	o.setAnswer(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(payment.HeaderExactPrice) == "" {
			return false
		}
		close(arrived)
		// The client leaves now. A cancelled retry shows here within
		// moments; one that goes on is answered after the bound.
		select {
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
		}
		o.serveCharged(w, o.price) // the origin charges the request it received
		return true
	})
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	req := newGet(t, o.url+"/a", "User-Agent", "TestBot/1.0").WithContext(ctx)
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
	}
	testsupport.WaitFor(t, "the ledger record of /a", func() bool {
		return recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaid)) != nil ||
			recordOf(t, p.audit, o.url+"/a", string(answer.ReasonPaymentFailed)) != nil
	})
	recs, sum := paidRecords(t, p.audit)
	if n, charged := o.totals(); n != 1 || len(recs) != 1 || sum != charged {
		t.Errorf("origin charged %d times (%d); ledger: %d paid records summing %d: %v", n, charged, len(recs), sum, p.audit.Records(t))
	}
}

// TestPaymentClientGoneUpFront: as the paid retry, a request carrying
// the remembered price up front (crawler-max-price) is not cancelled by
// the client leaving: the origin's charge is read, settled and counted.
func TestPaymentClientGoneUpFront(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil, payment.Budget{Scope: payment.ScopeFleet, Period: payment.PeriodDay,
		Limit: payment.MustParseAmount("USD 1")})
	if resp, _ := get(t, p.client, o.url+"/a"); resp.StatusCode != http.StatusOK { // quoted, remembered
		t.Fatalf("GET /a: %d", resp.StatusCode)
	}
	arrived := make(chan struct{})
	o.setAnswer(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(payment.HeaderMaxPrice) == "" {
			return false
		}
		close(arrived)
		select { // the client leaves now (see TestPaymentClientGoneDuringRetry)
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
		}
		o.serveCharged(w, o.price)
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	req := newGet(t, o.url+"/b", "User-Agent", "TestBot/1.0").WithContext(ctx)
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
	}
	<-arrived
	testsupport.WaitFor(t, "the origin's answer to /b", func() bool { n, _ := o.totals(); return n == 2 })
	testsupport.WaitFor(t, "the ledger record of /b", func() bool {
		recs, _ := paidRecords(t, p.audit)
		return len(recs) == 2
	})
	spend, err := p.srv.wallet.Spent(context.Background(), payment.SpendQuery{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Currency: "USD",
		At: time.Now()})
	if _, charged := o.totals(); err != nil || spend.Spent.Units != charged {
		t.Errorf("spent %v (%v), the origin charged %d", spend, err, charged)
	}
}

// TestPaymentRequote: a price changed between the quote and the retry
// (402 InvalidCrawlerExactPrice with the new price) is re-quoted once,
// within the caps, and paid at the new price.
func TestPaymentRequote(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	o.setAnswer(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(payment.HeaderExactPrice) != "" {
			o.setPrice("USD 0.015") // the price changed between the quote and the retry
			o.setAnswer(nil)
			w.Header().Set(payment.HeaderPrice, "USD 0.015")
			crawlerError(w, http.StatusPaymentRequired, payment.CodeInvalidCrawlerExactPrice)
			return true
		}
		return false
	})
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, nil)
	if resp, _ := get(t, p.client, o.url+"/a"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /a: %d", resp.StatusCode)
	}
	if _, sum := paidRecords(t, p.audit); sum != 15_000 {
		t.Errorf("ledger sum %d, want 15000", sum)
	}
}

// TestPaymentMITM: inside an MITM session the paid retry goes out
// through the session's round tripper to the https origin, signed for it.
func TestPaymentMITM(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o, ts := newPayOriginOn(t, k, "USD 0.01", true)
	cfg := testConfig(t)
	withSigning(&cfg, kp)
	cfg.Payment = config.PaymentConfig{Mode: config.PaymentPay, MaxPrice: payment.MustParseAmount("USD 0.02")}
	cfg.HTTPS.AllowedPorts = []int{int(netip.MustParseAddrPort(ts.Listener.Addr().String()).Port())}
	cfg.HTTPS.UpstreamRoots = []string{writeCertPEM(t, ts.Certificate())}
	p := startHTTPSProxy(t, cfg)
	resp, body := get(t, p.client(p.ca), o.url+"/a")
	if resp.StatusCode != http.StatusOK || body != "paid page" {
		t.Fatalf("GET /a: %d %q", resp.StatusCode, body)
	}
	reqs := o.received("/a")
	if n, _ := o.totals(); n != 1 || len(reqs) != 2 || reqs[1].Scheme != "https" {
		t.Fatalf("origin: %d charges, requests %v", n, reqs)
	}
	verifySigned(t, []signedBy{{reqs[1], "sig1", k}})
}

// TestPaymentIdentityOverride: with payment.mode off, the user whose
// credentials line says payment=pay pays; another user's 402 passes
// unchanged, unaudited.
func TestPaymentIdentityOverride(t *testing.T) {
	k, kp := newSigningKey(t, "wba.pem")
	o := newPayOrigin(t, k, "USD 0.01")
	creds := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(creds, []byte("payer:pw payment=pay payment_max_price=USD:0.02\nother:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := newPayProxy(t, kp, "USD 0.02", Deps{}, func(c *config.Config) {
		c.Payment.Mode = config.PaymentOff
		c.Auth.CredentialsFile = creds
	})
	if resp, _ := get(t, p.clientAs(t, "other", "pw"), o.url+"/a"); resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(answer.HeaderDecision) != "" {
		t.Fatalf("other: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get(t, p.clientAs(t, "payer", "pw"), o.url+"/b"); resp.StatusCode != http.StatusOK {
		t.Fatalf("payer: %d %v", resp.StatusCode, resp.Header)
	}
	if recs, _ := paidRecords(t, p.audit); len(recs) != 1 || recs[0]["user"] != "payer" {
		t.Errorf("ledger %v", recs)
	}
}

// TestPaymentPayIdentityNeedsKey: a credentials-file user with
// payment=pay and no signing key refuses to start, in one line.
func TestPaymentPayIdentityNeedsKey(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth.CredentialsFile = filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(cfg.Auth.CredentialsFile, []byte("bot:secret payment=pay payment_max_price=USD:0.01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := buildServer(t, cfg, enforce.Config{}, Deps{})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "signing key") {
		t.Fatalf("New: %v", err)
	}
}
