package enforce

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// tdmEnv is an env whose origin serves tdmrep.json with the status in
// status (0: 200) and the body in body, counting its fetches.
type tdmEnv struct {
	*env
	servedFile
}

func newTDMEnv(t *testing.T, body string) *tdmEnv {
	t.Helper()
	v := &tdmEnv{}
	v.body.Store(&body)
	v.env = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != tdmrep.WellKnownPath {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		v.serve(w, "")
	}, Config{})
	return v
}

func (v *tdmEnv) tdm(path string) TDMVerdict {
	v.t.Helper()
	return v.e.TDMRep(context.Background(), v.o.url(path), "GET")
}

// TestTDMRepCache: tdmrep.json is fetched once per origin while fresh,
// again once it expires (robots.ttl), and the file itself is not decided.
func TestTDMRepCache(t *testing.T) {
	v := newTDMEnv(t, `[{"location": "/a/", "tdm-reservation": 1, "tdm-policy": "https://p.example/p"}]`)
	for range 3 {
		if d := v.tdm("/a/x"); !d.Reserved() || d.Policy != "https://p.example/p" || d.FileStatus != StatusOK || !d.Checked {
			t.Fatalf("%+v", d)
		}
	}
	if d := v.tdm("/b"); d.Reservation != tdmrep.Unset || d.Unknown {
		t.Fatalf("/b: %+v", d)
	}
	if n := v.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches", n)
	}
	if d := v.tdm(tdmrep.WellKnownPath); d.Checked {
		t.Fatalf("tdmrep.json itself decided: %+v", d)
	}
	if d := v.tdm("/robots.txt"); d.Checked {
		t.Fatalf("/robots.txt decided: %+v", d)
	}
	if d := v.e.TDMRep(context.Background(), v.o.url(tdmrep.WellKnownPath), "DELETE"); !d.Checked {
		t.Fatal("DELETE of tdmrep.json not decided")
	}
	v.clock.Advance(25 * time.Hour)
	v.tdm("/a/x")
	if n := v.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after expiry", n)
	}
}

// TestTDMRepFetchHook: a tdmrep.json fetch is reported to TDMFetched, a
// robots.txt fetch to Fetched, never the one to the other.
func TestTDMRepFetchHook(t *testing.T) {
	var robots, tdm atomic.Int64
	v := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == tdmrep.WellKnownPath {
			io.WriteString(w, `[{"location": "/a/", "tdm-reservation": 1}]`)
			return
		}
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}, Config{Hooks: Hooks{
		Fetched:    func(string, FetchResult, time.Duration) { robots.Add(1) },
		TDMFetched: func(_ string, r FetchResult, _ time.Duration) { tdm.Add(int64(r.HTTPStatus)) },
	}})
	v.decide("/a/x", 1)
	if d := v.e.TDMRep(context.Background(), v.o.url("/a/x"), "GET"); !d.Reserved() {
		t.Fatalf("%+v", d)
	}
	if r, d := robots.Load(), tdm.Load(); r != 1 || d != 200 {
		t.Fatalf("robots.txt fetches reported %d, tdmrep.json statuses reported %d: want 1 and 200", r, d)
	}
}

// TestTDMRepUnreachable: a 5xx is unknown without a copy; with one read
// before, the copy stands within robots.unreachable_window; beyond it the
// file is treated as absent.
func TestTDMRepUnreachable(t *testing.T) {
	v := newTDMEnv(t, `[{"location": "/", "tdm-reservation": 1}]`)
	v.status.Store(503)
	if d := v.tdm("/x"); !d.Unknown || d.FileStatus != StatusUnreachable || d.Reserved() {
		t.Fatalf("503 first: %+v", d)
	}
	v.status.Store(0)
	v.clock.Advance(2 * time.Hour) // past the retry
	if d := v.tdm("/x"); !d.Reserved() || d.Unknown {
		t.Fatalf("200: %+v", d)
	}
	v.status.Store(500)
	v.clock.Advance(25 * time.Hour)
	if d := v.tdm("/x"); !d.Reserved() || d.Unknown || d.FileStatus != StatusUnreachable {
		t.Fatalf("500 with a good copy: %+v", d)
	}
	v.clock.Advance(31 * 24 * time.Hour)
	if d := v.tdm("/x"); d.Reserved() || d.Unknown {
		t.Fatalf("unreachable beyond the window: %+v", d)
	}
}

// TestTDMRepBodies: 404 and a body that is not a rule array reserve
// nothing; more rules than tdmrep.MaxRules is unknown.
func TestTDMRepBodies(t *testing.T) {
	v := newTDMEnv(t, "not found")
	v.status.Store(404)
	if d := v.tdm("/x"); d.Reserved() || d.Unknown || d.FileStatus != StatusUnavailable {
		t.Fatalf("404: %+v", d)
	}
	w := newTDMEnv(t, "<html>soft 404</html>")
	if d := w.tdm("/x"); d.Reserved() || d.Unknown || d.FileNote == "" {
		t.Fatalf("HTML: %+v", d)
	}
	many := "["
	for range tdmrep.MaxRules {
		many += `{"location":"/n/","tdm-reservation":0},`
	}
	many += `{"location":"/","tdm-reservation":1}]`
	x := newTDMEnv(t, many)
	if d := x.tdm("/x"); !d.Unknown || d.Reserved() {
		t.Fatalf("too many rules: %+v", d)
	}
}

// TestTDMEntryRebuild: an entry of a tdmrep.json rebuilds its rules, not
// robots.txt rules, from its stored body (as stores that serialise
// entries do), and its memory cost counts them.
func TestTDMEntryRebuild(t *testing.T) {
	body := []byte(`[{"location": "/a/", "tdm-reservation": 1}]`)
	en := &Entry{Key: TDMKey("https://example.com", netip.Addr{}), Result: FetchResult{Status: StatusOK, Body: body}}
	en.Rebuild(1 << 20)
	if en.Parsed != nil || en.TDM == nil || en.TDMErr != nil || en.TDM.Match("/a/b") == nil {
		t.Fatalf("%+v", en)
	}
	without := *en
	without.TDM = nil
	if entryCost(en) <= entryCost(&without) {
		t.Fatalf("cost %d does not count the rules (%d without them)", entryCost(en), entryCost(&without))
	}
	robotsEntry := &Entry{Key: robotsKey("https://example.com"), Result: FetchResult{Status: StatusOK, Body: []byte("User-agent: *\nDisallow: /\n")}}
	robotsEntry.Rebuild(1 << 20)
	if robotsEntry.Parsed == nil || robotsEntry.TDM != nil {
		t.Fatalf("robots entry: %+v", robotsEntry)
	}
}
