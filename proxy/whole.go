package proxy

import (
	"net/http"
	"strconv"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/bodyscan"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Response-side enforcement (robot tags, usage preferences) reads a
// forwarded document's body: it sees the whole representation, decoded,
// or nothing passes. A partial response (206, multipart/byteranges) would
// show the client bytes the scan never saw as a document, and a body the
// scan cannot decode would show it nothing at all.

// HeaderUnscanned is the header robotsgate adds, when its response steps
// only annotate, to an HTML response whose head the scan could not read
// whole (a coding or an encoding it does not decode, a head longer than
// max_scan_bytes), saying why. A value the origin sent itself is removed.
const HeaderUnscanned = "X-Robotsgate-Unscanned"

// wholeStep makes response-side enforcement see whole representations.
// While a response step may refuse the request's response (enforcing), it
// removes the range headers from the request ([bodyscan.AskWhole]), so that the origin sends
// the whole representation, which the scan reads, and narrows an
// Accept-Encoding the client sent to the codings the scan decodes
// . On the response side it refuses (403, reason response-unscannable) what would
// still pass unscanned: a partial response of a document the scan would
// read, and an HTML body whose head it could not read whole. When the response steps
// only annotate, requests are left alone and an undecodable HTML body is
// marked with [HeaderUnscanned].
//
// State: reads the caller (Agent) and the verdict (Purposes, Decision,
// Decided); writes the verdict (RangeRemoved) ([requestState]).
type wholeStep struct {
	tags, usage bool       // robot_tags enforce; usage.response enforce (both outside report mode)
	tdm         aipref.Set // tdmrep.purposes when tdmrep.mode is enforce (outside report mode)
	scanning    bool       // robot_tags is not off
	scansBodies bool       // robot_tags.max_scan_bytes > 0: bodies are scanned at all
}

// newWholeStep is the step for robot_tags cfg and usage.response usage
// in mode (Config.Mode).
func newWholeStep(cfg *config.Config) wholeStep {
	enforcing := cfg.Mode != config.ModeReport
	w := wholeStep{
		tags:        enforcing && cfg.RobotTags.Mode == config.RobotTagsEnforce,
		usage:       enforcing && cfg.Usage.Response == config.UsageResponseEnforce,
		scanning:    cfg.RobotTags.Mode != config.RobotTagsOff,
		scansBodies: cfg.RobotTags.MaxScanBytes > 0,
	}
	if enforcing && cfg.TDMRep.Mode == config.TDMRepEnforce {
		w.tdm = cfg.TDMRep.Purposes
	}
	return w
}

// enforcing reports whether a response step may refuse the response to
// the request of st for what its body says: robot tags enforce, or usage
// enforce for a request with declared purposes (the body's noai counts
// only then).
func (w wholeStep) enforcing(st *requestState) bool {
	return w.scansBodies && (w.tags || w.usage && st.Purposes != 0 || st.Purposes&w.tdm != 0)
}

func (w wholeStep) onRequest(r *http.Request, st *requestState) outcome {
	if !w.enforcing(st) {
		return outcome{}
	}
	if bodyscan.AskWhole(r.Header) {
		st.RangeRemoved = true
	}
	return outcome{}
}

func (w wholeStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if !bodyscan.Applies(resp.StatusCode) {
		return resp, outcome{}
	}
	resp.Header.Del(HeaderUnscanned)
	enforcing := w.enforcing(st)
	if resp.StatusCode/100 != 2 {
		// Robot tags count on every final response (robottags.go); the
		// usage and TDMRep steps read 2xx bodies only.
		enforcing = w.scansBodies && w.tags
	}
	if !enforcing {
		if w.scanning || st.Purposes != 0 {
			if scan := bodyscan.Of(resp); scan != nil && scan.Incomplete {
				resp.Header.Set(HeaderUnscanned, cleanRule(scan.NotScanned))
			}
		}
		return resp, outcome{}
	}
	why := ""
	if bodyscan.IsPartial(resp) {
		why = "partial response (" + strconv.Itoa(resp.StatusCode) + ", " + bodyscan.TypeOf(resp) + "): response enforcement reads whole documents only"
	} else if scan := bodyscan.Of(resp); scan != nil && scan.Incomplete {
		why = "meta not scanned: " + scan.NotScanned
	}
	if why == "" {
		return resp, outcome{}
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	return resp, refuse(unscannableDecision(st.Req, st, why))
}

// unscannableDecision is the refusal of req, decided st.Decision, because
// its response could not be scanned, for the reason why.
func unscannableDecision(req *http.Request, st *requestState, why string) enforce.Decision {
	d := st.Decision
	if !st.Decided {
		d = enforce.Decision{Agent: st.Agent, Purposes: st.Purposes}
		if req != nil && req.URL != nil {
			d.URL = enforce.RedactedURL(req.URL)
			d.Origin, _ = enforce.Origin(req.URL)
		}
	}
	d.Allowed, d.Reason = false, answer.ReasonResponseUnscannable
	d.Rule, d.Line, d.Detail = "", 0, cleanRule(why)
	return d
}
