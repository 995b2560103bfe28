package volume_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

// records collects the events recorded.
type records struct {
	mu  sync.Mutex
	evs []audit.Event
	err error
}

func (r *records) Record(e audit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
	return r.err
}

func (r *records) take() []audit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.evs
	r.evs = nil
	return evs
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestFlushCountsPerOriginAndIdentity(t *testing.T) {
	clock := enforcetest.NewClock(t0)
	rec := &records{}
	a := volume.New(rec, clock, 10)
	a.Add(volume.Observation{Origin: "https://b.example", Status: 200, Bytes: 100})
	a.Add(volume.Observation{Origin: "https://b.example", Status: 404, Bytes: 7})
	a.Add(volume.Observation{Origin: "https://a.example", User: "alice", Status: 200, Bytes: 5})
	a.Add(volume.Observation{Origin: "https://b.example", Status: 403, Bytes: 10})
	a.Note(&audit.Event{Origin: "https://b.example", Decision: audit.DecisionBlocked, Reason: "disallowed", Status: 403})
	a.Note(&audit.Event{Origin: "https://b.example", Decision: audit.DecisionReported, Reason: "usage-disallowed",
		Usage: []audit.Usage{{Purpose: "train-ai", Pref: "disallowed"}, {Purpose: "search", Pref: "allowed"}},
		TDM:   &audit.TDM{Reservation: "1"}, License: &audit.License{State: "prohibited", Use: "ai-train"}})
	a.Note(&audit.Event{Kind: audit.KindConfigReload, Origin: "https://b.example", Decision: audit.DecisionBlocked}) // not a decision
	clock.Advance(5 * time.Minute)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	evs := rec.take()
	if len(evs) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(evs), evs)
	}
	alice, b := evs[0], evs[1]
	if alice.Origin != "https://a.example" || alice.User != "alice" || alice.Volume.Requests != 1 || alice.Kind != audit.KindVolume {
		t.Errorf("first record %+v %+v", alice, alice.Volume)
	}
	v := b.Volume
	want := audit.Volume{Since: t0, Requests: 3, Bytes: 117,
		Status:      map[string]int64{"2xx": 1, "4xx": 2},
		StatusBytes: map[string]int64{"2xx": 100, "4xx": 17},
		Refused:     map[string]int64{"disallowed": 1},
		OptOuts:     map[string]int64{"robots:disallow": 1, "usage:train-ai": 1, "tdm:reserved": 1, "license:prohibited:ai-train": 1}}
	if got, _ := json.Marshal(v); !bytes.Equal(got, mustJSON(t, want)) {
		t.Errorf("volume\n got %s\nwant %s", got, mustJSON(t, want))
	}
	if !b.Time.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("time %v", b.Time)
	}
	// The next interval starts empty, at the flush.
	a.Add(volume.Observation{Origin: "https://b.example", Status: 200})
	clock.Advance(time.Minute)
	_ = a.Flush()
	if evs := rec.take(); len(evs) != 1 || evs[0].Volume.Requests != 1 || !evs[0].Volume.Since.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("second interval: %+v", evs)
	}
	_ = a.Flush()
	if evs := rec.take(); len(evs) != 0 {
		t.Errorf("an empty interval wrote %d records", len(evs))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConnectRefusalCountsAsRequest(t *testing.T) {
	rec := &records{}
	a := volume.New(rec, enforcetest.NewClock(t0), 10)
	a.Note(&audit.Event{Origin: "https://c.example:443", Method: "CONNECT", Decision: audit.DecisionBlocked, Reason: "site-denied", Status: 403})
	_ = a.Flush()
	evs := rec.take()
	if len(evs) != 1 || evs[0].Volume.Requests != 1 || evs[0].Volume.Status["4xx"] != 1 || evs[0].Volume.Refused["site-denied"] != 1 {
		t.Fatalf("%+v", evs)
	}
}

func TestOverflowFoldsIntoOneRecord(t *testing.T) {
	rec := &records{}
	a := volume.New(rec, enforcetest.NewClock(t0), 2)
	for _, o := range []string{"https://a.example", "https://b.example", "https://c.example", "https://d.example", "https://c.example"} {
		a.Add(volume.Observation{Origin: o, Status: 200, Bytes: 1})
	}
	_ = a.Flush()
	evs := rec.take()
	if len(evs) != 3 {
		t.Fatalf("%d records, want 2 origins and the overflow", len(evs))
	}
	other := evs[2]
	if other.Origin != "" || other.Volume.Requests != 3 || other.Volume.Origins != 2 || other.Volume.Bytes != 3 {
		t.Errorf("overflow %+v %+v", other, other.Volume)
	}
}

func TestRecordedLine(t *testing.T) {
	var buf bytes.Buffer
	aud := audit.New(nopCloser{&buf})
	a := volume.New(aud, enforcetest.NewClock(t0), 10)
	a.Add(volume.Observation{Origin: "https://a.example", Status: 200, Bytes: 9})
	a.Note(&audit.Event{Origin: "https://a.example", Decision: audit.DecisionBlocked, Reason: "disallowed"})
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Kind   string `json:"kind"`
		Origin string `json:"origin"`
		Volume struct {
			Since    time.Time        `json:"since"`
			Requests int64            `json:"requests"`
			Bytes    int64            `json:"bytes"`
			Status   map[string]int64 `json:"status"`
			Refused  map[string]int64 `json:"refused"`
			OptOuts  map[string]int64 `json:"opt_outs"`
		} `json:"volume"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if rec.Kind != "volume" || rec.Origin != "https://a.example" || rec.Volume.Requests != 1 || rec.Volume.Bytes != 9 ||
		rec.Volume.Status["2xx"] != 1 || rec.Volume.Refused["disallowed"] != 1 || rec.Volume.OptOuts["robots:disallow"] != 1 ||
		!rec.Volume.Since.Equal(t0) {
		t.Errorf("line %s", buf.Bytes())
	}
	if bytes.Contains(buf.Bytes(), []byte(`"agent"`)) {
		t.Errorf("a volume record names no agent: %s", buf.Bytes())
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func TestRunFlushesAtTicksAndAtTheEnd(t *testing.T) {
	rec := &records{}
	a := volume.New(rec, enforcetest.NewClock(t0), 10)
	ticks := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var failures []error
	go func() {
		defer close(done)
		a.Run(ctx, ticks, func(err error) { failures = append(failures, err) })
	}()
	a.Add(volume.Observation{Origin: "https://a.example", Status: 200})
	ticks <- t0
	ticks <- t0 // the first tick's flush is done once the second is taken
	if n := len(rec.take()); n != 1 {
		t.Errorf("after a tick: %d records, want 1", n)
	}
	rec.err = errors.New("disk full")
	a.Add(volume.Observation{Origin: "https://a.example", Status: 200})
	cancel()
	<-done
	if n := len(rec.take()); n != 1 {
		t.Errorf("at the end: %d records, want 1", n)
	}
	if len(failures) != 1 {
		t.Errorf("failures %v, want the failed write", failures)
	}
}

func TestNilAggregator(t *testing.T) {
	var a *volume.Aggregator
	a.Add(volume.Observation{Origin: "https://a.example"})
	a.Note(&audit.Event{Origin: "https://a.example"})
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
}
