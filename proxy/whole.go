package proxy

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
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

// rangeHeaders are the request headers, as canonical keys, that ask for
// part of a representation: Range, its condition If-Range, and
// Request-Range, the obsolete name some servers still honour.
var rangeHeaders = []string{"Range", "If-Range", "Request-Range"}

// scanAcceptEncoding are the content codings the scan decodes
// ([enforce.DecodeBody]), plus identity.
var scanAcceptEncoding = []string{"gzip", "x-gzip", "deflate", "identity"}

// wholeStep makes response-side enforcement see whole representations.
// While a response step may refuse the request's response (enforcing), it
// removes the [rangeHeaders] from the request, so that the origin sends
// the whole representation, which the scan reads, and narrows an
// Accept-Encoding the client sent to the codings the scan decodes
// ([narrowAcceptEncoding]). On the response side it refuses (403, reason response-unscannable) what would
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
	for _, k := range rangeHeaders {
		if _, ok := r.Header[k]; ok {
			st.RangeRemoved = true
			delete(r.Header, k)
		}
	}
	narrowAcceptEncoding(r.Header)
	return outcome{}
}

func (w wholeStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if !tagsApply(resp.StatusCode) {
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
			if scan := bodyScan(resp); scan != nil && scan.Incomplete {
				resp.Header.Set(HeaderUnscanned, cleanRule(scan.NotScanned))
			}
		}
		return resp, outcome{}
	}
	why := ""
	if isPartial(resp) {
		why = "partial response (" + strconv.Itoa(resp.StatusCode) + ", " + typeOf(resp) + "): response enforcement reads whole documents only"
	} else if scan := bodyScan(resp); scan != nil && scan.Incomplete {
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

// bodyScan is the robot-tag scan the round trip made of resp's body
// ([forwardTripper]), nil when it made none.
func bodyScan(resp *http.Response) *tagScan {
	switch b := resp.Body.(type) {
	case *copyBody:
		return b.scan
	case *tagBody:
		return b.scan
	}
	return nil
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

// isPartial reports whether resp carries part of a representation for a
// document the scan reads or whose type is unknown: a 206 of text/html or
// of no (or an unparsable) Content-Type, or any multipart/byteranges
// answer, whose parts the scan does not read.
func isPartial(resp *http.Response) bool {
	if ct := strings.TrimSpace(resp.Header.Get("Content-Type")); len(ct) >= len("multipart/") &&
		strings.EqualFold(ct[:len("multipart/")], "multipart/") && typeOf(resp) == "multipart/byteranges" {
		return true
	}
	if resp.StatusCode != http.StatusPartialContent {
		return false
	}
	mt := typeOf(resp)
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "unknown type"
}

// typeOf is resp's media type, "unknown type" when it has none or one
// that does not parse.
func typeOf(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt == "" {
		return "unknown type"
	}
	return mt
}

// narrowAcceptEncoding keeps, of the Accept-Encoding elements in h, those
// naming a coding the scan decodes ([scanAcceptEncoding]), verbatim; when
// none is left it says identity. A request without Accept-Encoding is
// left without: the origin then sends identity.
func narrowAcceptEncoding(h http.Header) {
	vals, ok := h["Accept-Encoding"]
	if !ok {
		return
	}
	var keep []string
	dropped := false
	for _, v := range vals {
		for el := range strings.SplitSeq(v, ",") {
			el = strings.TrimSpace(el)
			if el == "" {
				continue
			}
			coding, _, _ := strings.Cut(el, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if !isScanCoding(coding) {
				dropped = true
				continue
			}
			keep = append(keep, el)
		}
	}
	if !dropped && len(vals) == 1 {
		return
	}
	if len(keep) == 0 {
		keep = []string{"identity"}
	}
	h["Accept-Encoding"] = []string{strings.Join(keep, ", ")}
}

// isScanCoding reports whether coding is one of [scanAcceptEncoding].
func isScanCoding(coding string) bool {
	for _, c := range scanAcceptEncoding {
		if coding == c {
			return true
		}
	}
	return false
}
