package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// checkTDMRep implements "robotsgate check -tdmrep FILE": it reads a
// tdmrep.json ("-": standard input) and prints, for each URL, the
// reservation its rules give it, decided as the proxy decides
// ([enforce.DecideTDMRep]: the first matching rule, and the other
// spellings of the path): "reserved" (tdm-reservation 1, with the
// tdm-policy), "not-reserved" (0) or "unset" (no rule, or a protocol
// error). What the file holds that the protocol reads as an error is
// noted on stderr. The exit status is 1 when any URL is reserved, 0
// otherwise, and 2 when the file cannot be read, is not a JSON array of
// rules (the proxy then reads the origin as not implementing TDMRep) or
// holds more than [tdmrep.MaxRules] rules (the proxy then treats the
// reservation as unknown).
func checkTDMRep(file string, urls []string, asJSON bool, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "robotsgate check: "+format+"\n", a...)
		return 2
	}
	body, err := readWhole(file, "tdmrep.json", "the reservation is then unknown", stdin)
	if err != nil {
		return fail("%v", err)
	}
	f, err := tdmrep.Parse(body)
	if err != nil {
		return fail("-tdmrep %s: %v", file, err)
	}
	for _, p := range f.Problems {
		fmt.Fprintf(stderr, "robotsgate check: note: tdmrep.json %s\n", p)
	}
	enc := json.NewEncoder(safetext.Writer(stdout))
	enc.SetEscapeHTML(false)
	status := 0
	for _, u := range urls {
		v, via := enforce.DecideTDMRep(f, robots.PathParamsQuery(u))
		if v.Reserved() {
			status = 1
		}
		if asJSON {
			err = enc.Encode(tdmCheckResult{URL: u, Reservation: v.Reservation.String(), Reserved: v.Reserved(),
				Rule: v.Rule, Policy: v.Policy, Via: via})
		} else {
			_, err = io.WriteString(stdout, printable(tdmCheckLine(u, v, via))+"\n")
		}
		if err != nil {
			return fail("write: %v", err)
		}
	}
	return status
}

// tdmCheckResult is one line of "robotsgate check -tdmrep FILE -json".
type tdmCheckResult struct {
	URL         string `json:"url"`
	Reservation string `json:"tdm_reservation"` // 1, 0 or unset
	Reserved    bool   `json:"reserved"`
	Rule        string `json:"tdm_rule,omitempty"`
	Policy      string `json:"tdm_policy,omitempty"`
	Via         string `json:"tdm_via,omitempty"` // the spelling that matched, when not the URL's own
}

// tdmCheckLine is the text line of one URL.
func tdmCheckLine(u string, v tdmrep.Verdict, via string) string {
	word := map[tdmrep.Reservation]string{tdmrep.Reserved: "reserved", tdmrep.NotReserved: "not-reserved", tdmrep.Unset: "unset"}[v.Reservation]
	var why []string
	if v.Rule != "" {
		why = append(why, v.Rule)
	} else {
		why = append(why, "no rule matches")
	}
	if via != "" {
		why = append(why, "decided on "+via)
	}
	if v.Policy != "" {
		why = append(why, "tdm-policy: "+v.Policy)
	}
	return word + " " + u + "  (" + strings.Join(why, "; ") + ")"
}
