package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/proxy/audit/volume"
)

// volumeRecords collects the volume records of an Aggregator.
type volumeRecords struct {
	mu  sync.Mutex
	evs []audit.Event
}

func (r *volumeRecords) Record(e audit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
	return nil
}

// TestVolumeCountsEveryAnswer sends forwarded, streamed, missing, HEAD
// and refused requests through a Server and checks that its volume
// record counts each, with the bytes the client received by status
// class, and the refusals and robots.txt opt-outs.
func TestVolumeCountsEveryAnswer(t *testing.T) {
	o := newOrigin(t, robotsBody(privateRobots), func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Write([]byte(strings.Repeat("s", 3000)))
			w.(http.Flusher).Flush() // no Content-Length: counted as read
			w.Write([]byte("tail"))
		case "/missing":
			http.NotFound(w, r)
		default:
			w.Write([]byte("page " + r.URL.Path))
		}
	})
	rec := &volumeRecords{}
	agg := volume.New(rec, nil, 100)
	_, addr := startServer(t, testConfig(t), enforce.Config{}, Deps{Volume: agg})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: testTimeout}
	want := map[string]int64{}
	wantBytes := map[string]int64{}
	for _, p := range []string{"/a", "/b", "/stream", "/missing", "/private/1", "/private/2"} {
		resp, body := get(t, c, o.URL+p)
		class := string(rune('0'+resp.StatusCode/100)) + "xx"
		want[class]++
		wantBytes[class] += int64(len(body))
	}
	req, _ := http.NewRequest(http.MethodHead, o.URL+"/a", nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		want["2xx"]++
	} else {
		t.Fatal(err)
	}
	if err := agg.Flush(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) != 1 {
		t.Fatalf("%d volume records, want 1: %+v", len(rec.evs), rec.evs)
	}
	v := rec.evs[0].Volume
	if rec.evs[0].Origin != strings.TrimSuffix(o.URL, "/") {
		t.Errorf("origin %q, want %q", rec.evs[0].Origin, o.URL)
	}
	if v.Requests != 7 {
		t.Errorf("requests %d, want 7", v.Requests)
	}
	for class, n := range want {
		if v.Status[class] != n || v.StatusBytes[class] != wantBytes[class] {
			t.Errorf("%s: %d requests, %d bytes; want %d, %d", class, v.Status[class], v.StatusBytes[class], n, wantBytes[class])
		}
	}
	if v.Refused["disallowed"] != 2 || v.OptOuts["robots:disallow"] != 2 {
		t.Errorf("refused %v, opt-outs %v; want 2 disallowed each", v.Refused, v.OptOuts)
	}
}
