package politeness

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter parses the value of a Retry-After header (RFC 9110
// §10.2.3), either delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct
// 2015 07:28:00 GMT", or the obsolete RFC 850 and asctime forms), and
// returns how long after now it asks the client to wait.
//
// ok is false when v is empty or malformed (including a signed number
// such as "-5" or "+5", which delta-seconds does not allow). A well-formed
// value may still yield d <= 0: "0", or a date at or before now. A
// delta-seconds value too large for a [time.Duration] yields the largest
// Duration, so that callers clamp it rather than ignore it.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(maxDuration/time.Second) {
			return maxDuration, true // all digits: only overflow fails
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return t.Sub(now), true
}

// FormatRetryAfter formats d as the delta-seconds of a Retry-After header,
// rounded up to whole seconds and at least "1", so that a client honouring
// it never retries before d has passed nor retries at once.
func FormatRetryAfter(d time.Duration) string {
	if d <= 0 {
		return "1"
	}
	s := d / time.Second
	if d%time.Second != 0 || s == 0 {
		s++
	}
	return strconv.FormatInt(int64(s), 10)
}

// maxDuration is the largest [time.Duration].
const maxDuration = time.Duration(1<<63 - 1)

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
