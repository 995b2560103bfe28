package audit

import (
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// KindVolume is the [Event.Kind] of a volume record: what robotsgate saw
// of one origin, for one identity, during one interval ([Volume]).
const KindVolume = "volume"

// Volume is the body of a volume record ("volume"): counts of one
// origin's requests over an interval that ends at the record's time. A
// record with no origin is the interval's overflow bucket: the origins
// beyond the cap, folded together.
type Volume struct {
	Since    time.Time // start of the interval
	Requests int64     // requests answered (forwarded or refused)
	Bytes    int64     // response body bytes sent to the client
	// Status and StatusBytes count requests and bytes by status class
	// ("2xx", "3xx", "4xx", "5xx", "other").
	Status      map[string]int64
	StatusBytes map[string]int64
	// Refused counts refusals by reason.
	Refused map[string]int64
	// OptOuts counts audited decisions that saw an opt-out, by kind:
	// "robots:disallow", "usage:<purpose>", "content-use:<level>",
	// "tdm:reserved", "license:<state>".
	OptOuts map[string]int64
	// RobotsSHA256 are the distinct robots.txt versions decisions used.
	RobotsSHA256 []string
	// Origins is, in the overflow bucket, how many origins it folds.
	Origins int64
}

// volumeFields writes e's volume body, if any.
func volumeFields(ev *zerolog.Event, e *Event) {
	v := e.Volume
	if v == nil {
		return
	}
	d := zerolog.Dict().Str("since", v.Since.UTC().Format(time.RFC3339Nano)).
		Int64("requests", v.Requests).Int64("bytes", v.Bytes)
	counts := func(k string, m map[string]int64) {
		if len(m) == 0 {
			return
		}
		c := zerolog.Dict()
		keys := make([]string, 0, len(m))
		for name := range m {
			keys = append(keys, name)
		}
		slices.Sort(keys)
		for _, name := range keys {
			c.Int64(name, m[name])
		}
		d.Dict(k, c)
	}
	counts("status", v.Status)
	counts("status_bytes", v.StatusBytes)
	counts("refused", v.Refused)
	counts("opt_outs", v.OptOuts)
	if len(v.RobotsSHA256) > 0 {
		d.Strs("robots_sha256", v.RobotsSHA256)
	}
	if v.Origins > 0 {
		d.Int64("origins", v.Origins)
	}
	ev.Dict("volume", d)
}
