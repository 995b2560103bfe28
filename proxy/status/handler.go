package status

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

//go:embed page
var page embed.FS

// Paths the status page is served at, below the admin listener's root.
const (
	PagePath   = "/"
	AssetsPath = "/status/" // the page's script and style sheet
	DataPath   = "/v1/status"
	EventsPath = "/v1/events"
)

// IsPath reports whether the admin request path p belongs to the status
// page (the page, its assets, its data and its event stream).
func IsPath(p string) bool {
	return p == PagePath || p == DataPath || p == EventsPath || len(p) > len(AssetsPath) && p[:len(AssetsPath)] == AssetsPath
}

// Info is what the page shows besides the Board's counts: the robots.txt
// cache and the running configuration's summary.
type Info struct {
	Cache  Cache     `json:"cache"`
	Config []Setting `json:"config"`
	Spend  []Spend   `json:"spend,omitempty"` // payment budgets, in their current period
}

// Cache is the state of the robots.txt cache.
type Cache struct {
	Mode string `json:"mode"` // "memory", or the Redis mode with its address (no credentials)
	// RedisHealthy is whether the Redis layer reaches Redis; nil in
	// memory.
	RedisHealthy *bool `json:"redis_healthy,omitempty"`
	// Problem is why the Redis setting cannot work (a refused password,
	// an unknown master…) while that keeps this replica on local state;
	// "" otherwise.
	Problem   string `json:"problem,omitempty"`
	Entries   int    `json:"entries"`   // entries in this process's cache
	Bytes     int64  `json:"bytes"`     // their memory, as charged against robots.max_cache_mb
	Evictions int64  `json:"evictions"` // entries evicted to stay within the bounds
}

// Setting is one line of the configuration's summary: a setting's key
// and its value, never a secret's.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// topOrigins is how many origins the page lists.
const topOrigins = 10

// keepAlive is how often an idle event stream sends a comment, so that
// proxies between robotsgate and the browser keep it open.
const keepAlive = 15 * time.Second

// writeTimeout bounds one write to an event stream: a client that reads
// nothing for this long is disconnected.
const writeTimeout = 10 * time.Second

// Handler serves the page, its assets, its data (GET /v1/status: the
// Snapshot and info's Info) and its event stream (GET /v1/events:
// server-sent events "decision", one per record with its Seq as the
// event's id, and "dropped", the number of records a stream that fell
// behind lost; ?since=SEQ or a Last-Event-ID header resumes after that
// position, see [Board.subscribe]). Access control is the caller's.
func Handler(b *Board, info func() Info) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { asset(w, "page/index.html", "text/html; charset=utf-8") })
	mux.HandleFunc("GET /status/app.js", func(w http.ResponseWriter, r *http.Request) {
		asset(w, "page/app.js", "text/javascript; charset=utf-8")
	})
	mux.HandleFunc("GET /status/app.css", func(w http.ResponseWriter, r *http.Request) { asset(w, "page/app.css", "text/css; charset=utf-8") })
	mux.HandleFunc("GET "+DataPath, func(w http.ResponseWriter, r *http.Request) {
		v := struct {
			Snapshot
			Info
		}{b.Snapshot(topOrigins), info()}
		w.Header().Set("Content-Type", "application/json")
		secure(w.Header())
		_ = json.NewEncoder(w).Encode(v) // HTML-escaped: the page reads it as data only
	})
	mux.HandleFunc("GET "+EventsPath, func(w http.ResponseWriter, r *http.Request) { stream(w, r, b) })
	return mux
}

// secure sets the headers of every answer of the page: not cached, not
// sniffed, not framed, and no script, style or connection but its own.
func secure(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// asset writes the embedded file name.
func asset(w http.ResponseWriter, name, ctype string) {
	b, err := page.ReadFile(name)
	if err != nil {
		http.Error(w, "status page asset missing", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	secure(w.Header())
	_, _ = w.Write(b)
}

// stream serves one event stream until the client goes, the Board closes
// or a write is stuck for [writeTimeout].
func stream(w http.ResponseWriter, r *http.Request, b *Board) {
	after, err := resumeAfter(r)
	if err != nil {
		http.Error(w, "robotsgate admin: "+err.Error(), http.StatusBadRequest)
		return
	}
	s, ok := b.subscribe(after)
	if !ok {
		http.Error(w, "robotsgate admin: too many status pages open (or shutting down)", http.StatusServiceUnavailable)
		return
	}
	defer b.Unsubscribe(s)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	secure(h)
	w.WriteHeader(http.StatusOK)
	send := func(write func(io.Writer) error) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		return write(w) == nil && rc.Flush() == nil
	}
	if !send(func(w io.Writer) error { _, err := io.WriteString(w, ": robotsgate status\n\n"); return err }) {
		return
	}
	if n := s.Dropped(); n > 0 && !send(func(w io.Writer) error { return writeDropped(w, n) }) {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-b.Done():
			return
		case <-s.gone: // it held its byte budget unsent: it does not read
			return
		case <-tick.C:
			if !send(func(w io.Writer) error { _, err := io.WriteString(w, ": keep-alive\n\n"); return err }) {
				return
			}
		case it := <-s.Items():
			s.took(&it)
			if !send(func(w io.Writer) error { return writeEvent(w, &it, s.Dropped()) }) {
				return
			}
		}
	}
}

// writeEvent writes the record it as a "decision" event, preceded by a
// "dropped" event when the stream lost records before it.
func writeEvent(w io.Writer, it *Item, dropped int64) error {
	if dropped > 0 {
		if err := writeDropped(w, dropped); err != nil {
			return err
		}
	}
	data, err := json.Marshal(it) // one line: JSON strings escape every line break
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: decision\ndata: %s\n\n", it.Seq, data)
	return err
}

// writeDropped writes a "dropped" event: n records the stream lost.
func writeDropped(w io.Writer, n int64) error {
	_, err := fmt.Fprintf(w, "event: dropped\ndata: %d\n\n", n)
	return err
}

// resumeAfter is the position a stream resumes after: the Last-Event-ID
// header a browser's event source sends when it reconnects, else the since
// parameter the page opens the stream with (its snapshot's Seq), else -1
// (from now on).
func resumeAfter(r *http.Request) (int64, error) {
	name, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "since", r.URL.Query().Get("since")
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a record position (a whole number, 0 or more), not %q", name, v)
	}
	return n, nil
}
