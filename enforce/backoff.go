package enforce

import "time"

// Backoff returns the wait after the n-th consecutive failure (n >= 1):
// start doubled n-1 times, at most limit. It is robotsgate's one
// exponential backoff: the robots.txt re-fetch after failures and the
// politeness pauses after 503/429 both use it.
func Backoff(start, limit time.Duration, n int) time.Duration {
	d := start
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
