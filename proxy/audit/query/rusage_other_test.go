//go:build !unix

package query_test

import "time"

// cpuTime is unknown here: the CPU-time metric is not reported.
func cpuTime() time.Duration { return 0 }
