package redisfleet

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/redistest"
	"github.com/robotsgate/robotsgate/internal/robotsmix"
)

// TestEntryCodecRejectsBadValues: truncated, altered or oversized stored
// entries are errors (the store then deletes them), never a panic.
func TestEntryCodecRejectsBadValues(t *testing.T) {
	e := &enforce.Entry{Key: robotsKey("https://a.test"), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
		Body: []byte(redisTestRobots)}, FetchedAt: redisT0, Expires: redisT0.Add(time.Hour), Failures: 2}
	good, err := encodeRedisEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeRedisEntry(good, e.Key, testMaxBytes); err != nil {
		t.Fatalf("good entry: %v", err)
	}
	for i := range len(good) {
		if _, err := decodeRedisEntry(good[:i], e.Key, testMaxBytes); err == nil {
			t.Fatalf("entry cut at %d of %d bytes decoded", i, len(good))
		}
	}
	// A header that does not match the payload (a hand-edited fetch time
	// would mislead the compare-and-set).
	h, z, _ := parseEntryHeader(good)
	forged := []byte("2|" + strconv.FormatInt(h.fetchedMS+1, 10) + "|o|0|2|")
	if _, err := decodeRedisEntry(append(forged, z...), e.Key, testMaxBytes); err == nil {
		t.Fatal("entry with a forged header decoded")
	}
	// A payload that inflates past the bound (a DEFLATE bomb).
	var bomb bytes.Buffer
	bomb.WriteString("2|0|o|0|0|")
	w, _ := flate.NewWriterDict(&bomb, flate.BestCompression, []byte(entryDict))
	w.Write(make([]byte, maxPayload(1000)+10))
	w.Close()
	if _, err := decodeRedisEntry(bomb.Bytes(), e.Key, 1000); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("bomb: %v, want the payload bound", err)
	}
}

// corpus returns the bodies of the real-world robots.txt corpus
// (robotsmix.RealWorld) by host; without it the measurement is skipped.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, f := range robotsmix.RealWorldForTest(t) {
		files[f.Host] = f.Body
	}
	if len(files) < 1000 {
		t.Fatalf("corpus has %d files", len(files))
	}
	return files
}

// v1JSON is the stored form of earlier versions (JSON, the body in
// base64), kept here to measure what the compact form saves.
func v1JSON(e *enforce.Entry) []byte {
	type result struct {
		Status     enforce.Status `json:"status"`
		HTTPStatus int            `json:"http_status,omitempty"`
		Body       []byte         `json:"body,omitempty"`
		FinalURL   string         `json:"final_url,omitempty"`
	}
	b, _ := json.Marshal(struct {
		V         int       `json:"v"`
		Origin    string    `json:"origin"`
		Result    result    `json:"result"`
		FetchedAt time.Time `json:"fetched_at"`
		FetchedMS int64     `json:"fetched_ms"`
		Expires   time.Time `json:"expires"`
	}{1, e.Key.String(), result{e.Result.Status, e.Result.HTTPStatus, e.Result.Body, e.Result.FinalURL},
		e.FetchedAt, e.FetchedAt.UnixMilli(), e.Expires})
	return b
}

// TestEntryMemoryOnCorpus stores every robots.txt of the real-world
// corpus as robotsgate does (key with its hash tag, a lifetime) in a real
// redis-server and measures MEMORY USAGE per key: the mean must stay
// within half the mean body plus 200 bytes. The figures of the old JSON
// form are logged next to it (go test -v).
func TestEntryMemoryOnCorpus(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	files := corpus(t)
	var bodies, stored, memNew, memOld int64
	usedBefore := usedMemory(t, c)
	for name, body := range files {
		origin := "https://" + name
		e := &enforce.Entry{Key: robotsKey(origin), Result: enforce.FetchResult{Status: enforce.StatusOK, HTTPStatus: 200,
			Body: body, FinalURL: origin + "/robots.txt"}, FetchedAt: redisT0, Expires: redisT0.Add(24 * time.Hour)}
		data, err := encodeRedisEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeRedisEntry(data, e.Key, testMaxBytes)
		if err != nil || !bytes.Equal(back.Result.Body, body) {
			t.Fatalf("%s: round trip: %v", name, err)
		}
		key := testKeys.robots(origin)
		for _, v := range []struct {
			data []byte
			mem  *int64
		}{{v1JSON(e), &memOld}, {data, &memNew}} {
			if err := c.Set(ctx, key, v.data, 24*time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := c.MemoryUsage(ctx, key, 0).Result()
			if err != nil {
				t.Fatal(err)
			}
			*v.mem += n
		}
		bodies += int64(len(body))
		stored += int64(len(data))
	}
	n := int64(len(files))
	meanBody, meanNew := float64(bodies)/float64(n), float64(memNew)/float64(n)
	t.Logf("%d real robots.txt files: mean body %.0f B; stored value %.0f B; MEMORY USAGE per entry: %.0f B (JSON form: %.0f B); used_memory grew %.0f B per entry",
		n, meanBody, float64(stored)/float64(n), meanNew, float64(memOld)/float64(n), float64(usedMemory(t, c)-usedBefore)/float64(n))
	if goal := 0.5*meanBody + 200; meanNew > goal {
		t.Fatalf("mean MEMORY USAGE per entry %.0f B, over the goal of %.0f B (0.5 × mean body + 200 B)", meanNew, goal)
	}
}

// usedMemory returns the used_memory of INFO memory.
func usedMemory(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	v, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(v, "\r\n") {
		if s, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO memory has no used_memory")
	return 0
}
