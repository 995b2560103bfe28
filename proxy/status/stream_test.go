package status

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSubscribeResumes: a stream opened after a snapshot's position gets
// the records published between the snapshot and the stream, in order,
// then the new ones; a position older than the records held counts the
// ones no longer held as dropped.
func TestSubscribeResumes(t *testing.T) {
	b := New(nil)
	for i := range 3 {
		b.Publish(refusal(fmt.Sprintf("http://before%d.example", i), "disallowed"))
	}
	snap := b.Snapshot(10)
	if snap.Seq != 3 || snap.Recent[2].Seq != 3 {
		t.Fatalf("snapshot seq %d, last record seq %d; want 3", snap.Seq, snap.Recent[2].Seq)
	}
	b.Publish(refusal("http://between1.example", "disallowed"))
	b.Publish(refusal("http://between2.example", "disallowed"))
	s, ok := b.subscribe(snap.Seq)
	if !ok {
		t.Fatal("subscribe refused")
	}
	b.Publish(refusal("http://after.example", "disallowed"))
	var got []string
	for len(s.Items()) > 0 {
		it := <-s.Items()
		got = append(got, fmt.Sprintf("%d %s", it.Seq, it.Origin))
	}
	want := []string{"4 http://between1.example", "5 http://between2.example", "6 http://after.example"}
	if fmt.Sprint(got) != fmt.Sprint(want) || s.Dropped() != 0 {
		t.Errorf("stream after %d: %v (dropped %d), want %v", snap.Seq, got, s.Dropped(), want)
	}

	for range recentItems {
		b.Publish(refusal("http://later.example", "disallowed"))
	}
	old, _ := b.subscribe(2)
	if n, d := len(old.Items()), old.Dropped(); n != recentItems || d != 4 {
		t.Errorf("stream after 2: %d records replayed, %d dropped; want %d and %d", n, d, recentItems, 4)
	}
	now, _ := b.Subscribe()
	if n := len(now.Items()); n != 0 {
		t.Errorf("Subscribe (from now on) replayed %d records", n)
	}
}

// TestStreamResumesAfterPosition: GET /v1/events?since=SEQ sends the
// records after SEQ with their positions as event ids; Last-Event-ID (an
// EventSource reconnecting) takes precedence; a bad position is a 400.
func TestStreamResumesAfterPosition(t *testing.T) {
	b := New(nil)
	srv := httptest.NewServer(Handler(b, func() Info { return Info{} }))
	defer srv.Close()
	defer b.Close()
	client := &http.Client{Timeout: 10 * time.Second} // bounds the reading of the stream too
	for _, o := range []string{"a", "b", "c"} {
		b.Publish(refusal("http://"+o+".example", "disallowed"))
	}
	for _, tc := range []struct {
		name, query, lastID string
		want                []string
	}{
		{"since", "?since=1", "", []string{"2 http://b.example", "3 http://c.example"}},
		{"last-event-id wins", "?since=0", "2", []string{"3 http://c.example"}},
		{"since zero", "?since=0", "", []string{"1 http://a.example", "2 http://b.example", "3 http://c.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+EventsPath+tc.query, nil)
			if tc.lastID != "" {
				req.Header.Set("Last-Event-ID", tc.lastID)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := readEvents(t, bufio.NewReader(resp.Body), len(tc.want)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"?since=x", "?since=-1"} {
		t.Run("bad "+bad, func(t *testing.T) {
			resp, err := http.Get(srv.URL + EventsPath + bad)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("GET %s: %d, want 400", bad, resp.StatusCode)
			}
		})
	}
}

// readEvents reads n "decision" events of a stream as "ID ORIGIN",
// checking that each event's id is its record's seq.
func readEvents(t *testing.T, br *bufio.Reader, n int) []string {
	t.Helper()
	var got []string
	id := ""
	for len(got) < n {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (got %v)", err, got)
		}
		l = strings.TrimSuffix(l, "\n")
		if v, ok := strings.CutPrefix(l, "id: "); ok {
			id = v
		}
		if data, ok := strings.CutPrefix(l, "data: "); ok && id != "" {
			var it Item
			if err := json.Unmarshal([]byte(data), &it); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			if fmt.Sprint(it.Seq) != id {
				t.Errorf("event id %s, record seq %d", id, it.Seq)
			}
			got = append(got, id+" "+it.Origin)
			id = ""
		}
	}
	return got
}
