package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/answer"
	"github.com/robotsgate/robotsgate/proxy/audit"
	"github.com/robotsgate/robotsgate/robots/robottag"
)

// maxTagDetail bounds the detail text of robot-tag audit records and
// refusals; headers and meta elements come from the origin.
const maxTagDetail = 1024

// tagScan is what one response's robot tags say.
type tagScan struct {
	Header []robottag.Directive // from its X-Robots-Tag headers
	Meta   []robottag.Directive // from <meta name="robots|AGENT"> in its HTML head
	// Named is the content of the head's first <meta> of each name the
	// TDMRep step reads (tdm-reservation, tdm-policy), when present.
	Named map[string]string
	// Scanned is the number of body bytes read to look for meta elements.
	Scanned int
	// NotScanned says why an HTML body was not (fully) scanned for meta
	// elements, "" when it was or when the response is not HTML.
	NotScanned string
	// Incomplete says that the scan could not read the whole head: the
	// body's Content-Encoding (br, zstd, a corrupt stream, ...) or its
	// character encoding (UTF-32, ...) is one the scan cannot decode, or
	// the head goes on past max_scan_bytes. A step that may refuse must
	// not pass it on as scanned.
	Incomplete bool
}

// tagEvent is what [robotTagsStep.onResponse] found and did with a response whose
// robot tags say it must not be kept.
type tagEvent struct {
	tagScan
	Matched []string // the robot_tags.deny entries that matched
	Refused bool     // enforce mode: the response was replaced by a 403
}

// detail formats ev for an audit record or a refusal body, e.g.
// "deny noindex; X-Robots-Tag: mandelbot: noindex; meta: nofollow".
func (ev *tagEvent) detail() string {
	var sb strings.Builder
	sb.WriteString("deny " + strings.Join(ev.Matched, ", "))
	list := func(label string, ds []robottag.Directive) {
		if len(ds) == 0 {
			return
		}
		sb.WriteString("; " + label + ": ")
		for i, d := range ds {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(d.String())
		}
	}
	list("X-Robots-Tag", ev.Header)
	list("meta", ev.Meta)
	if ev.NotScanned != "" {
		sb.WriteString("; meta not scanned: " + ev.NotScanned)
	}
	return answer.BoundedLine(sb.String(), maxTagDetail)
}

// tagBody is a response body whose first bytes were read to scan for
// meta elements: it replays them, then reads on from the origin's body,
// and closes the origin's body. It carries the scan's result, so that a
// later step need not scan again.
type tagBody struct {
	io.Reader
	orig io.ReadCloser
	scan *tagScan
}

func (b *tagBody) Close() error { return b.orig.Close() }

// scanRecorder keeps every byte read through it, and the first read
// error other than io.EOF.
type scanRecorder struct {
	r   io.Reader
	buf []byte
	err error
}

func (s *scanRecorder) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.buf = append(s.buf, p[:n]...)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// errReader returns err on every Read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// scanRobotTags returns what resp's robot tags say: its X-Robots-Tag
// headers always, and, for a final ([tagsApply]) HTML response (text/html,
// application/xhtml+xml, or a body without a usable Content-Type that
// sniffs as HTML: [docKindOf]), the meta elements in the first
// cfg.MaxScanBytes of its text (less when the head ends earlier;
// [scanHead]). The bytes read are not lost: resp.Body is replaced by a
// *[tagBody] that replays them and then streams the rest of the original
// body, which is never buffered; ContentLength and the headers are left
// as they are. A read error during the scan is handed to the client after
// the bytes read before it. Scanning a response twice returns the first
// result.
//
// A body with a Content-Encoding (gzip, x-gzip, deflate, stacked) is
// decoded for the scan only ([scanBody]): the client gets the bytes the
// origin sent. A body the scan cannot decode (br, zstd, a corrupt
// stream, ...) is Undecodable.
func scanRobotTags(resp *http.Response, cfg config.RobotTagsConfig) *tagScan {
	return scanRobotTagsInto(resp, cfg, nil)
}

// scanRobotTagsInto is [scanRobotTags] with the result written to into
// (nil: a new one) unless resp was scanned before.
func scanRobotTagsInto(resp *http.Response, cfg config.RobotTagsConfig, into *tagScan) *tagScan {
	if s := bodyScan(resp); s != nil {
		return s
	}
	if into == nil {
		into = new(tagScan)
	}
	*into = tagScan{Header: robottag.ParseXRobotsTag(resp.Header.Values("X-Robots-Tag"))}
	s := into
	kind := docKindOf(resp.Header)
	if kind == docOther || !hasBody(resp) || !tagsApply(resp.StatusCode) {
		return s
	}
	if cfg.MaxScanBytes <= 0 {
		s.NotScanned = "robot_tags.max_scan_bytes is 0"
		return s
	}
	scanBody(resp, s, cfg.MaxScanBytes, kind == docSniff)
	return s
}

// scanBody fills in s.Meta from the head in the first maxBytes decoded
// bytes of resp's body ([scanHead]; sniff as [docKindOf] says)
// and replaces resp.Body by a *[tagBody] replaying the bytes read (as the
// origin sent them) before the rest. The coded bytes read are bounded too
// ([enforce.DecodeBody]), so a decompression bomb costs no more memory
// than a plain page.
func scanBody(resp *http.Response, s *tagScan, maxBytes int, sniff bool) {
	orig := resp.Body
	rec := &scanRecorder{r: orig}
	src, codings, err := enforce.DecodeBody(resp.Header, rec, maxBytes)
	if err == nil {
		err = scanHead(src, s, maxBytes, sniff) // fails only when reading fails
	}
	s.Scanned = len(rec.buf)
	var rest io.Reader = orig
	switch {
	case rec.err != nil:
		rest = errReader{rec.err}
		s.NotScanned = "reading the body failed: " + rec.err.Error()
		// The client gets the coded bytes read before the error, which
		// the decoder may not have shown the scan in full.
		s.Incomplete = err != nil && len(codings) > 0
	case err != nil:
		s.Incomplete = true
		s.NotScanned = "body cannot be decoded: " + err.Error()
	}
	if why := unreadableCharset(headerCharsets(resp.Header)); why != "" && rec.err == nil && !s.Incomplete {
		s.Incomplete, s.NotScanned = true, why // scancharset.go
	}
	resp.Body = &tagBody{Reader: io.MultiReader(bytes.NewReader(rec.buf), rest), orig: orig, scan: s}
}

// tagsApply reports whether the robot tags of a response of status code
// count: those of every final response the crawler receives, not only of
// a 2xx. An error page or a redirect is a document the crawler gets and
// may keep as much as a 200; a 304's X-Robots-Tag updates the headers of
// the cached page it revalidates (RFC 9111 section 4.3.4), so a noindex
// there applies to that page. Only an interim 1xx (101, whose connection
// is relayed) carries none.
func tagsApply(code int) bool { return code >= http.StatusOK }

// hasBody reports whether resp may have a body to scan.
func hasBody(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength == 0 {
		return false
	}
	if resp.Request != nil && resp.Request.Method == http.MethodHead {
		return false
	}
	return resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified
}

// robotTagOutcome is the outcome of the robot tags of a forwarded response to
// req, for the crawler whose product token is agent.
//
// It acts on every final response ([tagsApply]) and only in modes
// annotate and enforce (any mode other than off and enforce is treated as
// annotate). It reads the
// response's robot tags ([scanRobotTags], unless an earlier step already
// did) and asks [robottag.Verdict] whether they say "do not keep" for
// agent, with cfg.Deny (nil means [robottag.DefaultDeny]). When they do
// not, ev is nil and the outcome is zero. When they do:
//
//   - annotate: resp gets answer.HeaderIndex listing the matched deny entries,
//     its body intact, and the outcome audits it as reported;
//   - enforce: resp's body is closed unread (beyond the scan) and the
//     outcome is a 403 refusal (reason robot-tag) carrying answer.HeaderIndex.
//
// ev then describes what was found.
func robotTagOutcome(req *http.Request, resp *http.Response, agent string, cfg config.RobotTagsConfig) (ev *tagEvent, o outcome) {
	if cfg.Mode == config.RobotTagsOff || resp == nil || !tagsApply(resp.StatusCode) {
		return nil, outcome{}
	}
	s := scanRobotTags(resp, cfg)
	deny := cfg.Deny
	if deny == nil {
		deny = robottag.DefaultDeny()
	}
	all := append(append([]robottag.Directive(nil), s.Header...), s.Meta...)
	denied, matched := robottag.Verdict(all, agent, deny)
	if !denied {
		return nil, outcome{}
	}
	ev = &tagEvent{tagScan: *s, Matched: matched}
	index := strings.Join(matched, ", ")
	d := tagDecision(req, agent, ev)
	if cfg.Mode != config.RobotTagsEnforce {
		resp.Header.Set(answer.HeaderIndex, index)
		o = note(audit.DecisionReported, d)
		o.status = resp.StatusCode
		return ev, o
	}
	ev.Refused = true
	if resp.Body != nil {
		resp.Body.Close()
	}
	o = refuse(d)
	o.header = http.Header{answer.HeaderIndex: {index}}
	return ev, o
}

// tagDecision is the refusal of req by robot tags described by ev.
func tagDecision(req *http.Request, agent string, ev *tagEvent) enforce.Decision {
	d := enforce.Decision{Reason: answer.ReasonRobotTag, Agent: agent, Detail: ev.detail()}
	if req != nil && req.URL != nil {
		d.URL = enforce.RedactedURL(req.URL)
		d.Origin, _ = enforce.Origin(req.URL)
	}
	return d
}

// robotTagsStep is the robot-tag response step ([robotTagOutcome]): in
// annotate mode it marks forwarded responses that say "do not keep", in
// enforce mode it refuses them with a 403; both are audited (reason
// robot-tag; decision reported when forwarded, blocked when refused). As
// every step of the settings' response list, it sees only the origin's
// responses ([fromOrigin]), never robotsgate's own.
//
// State: reads the caller (Agent) and the verdict (Decision); writes the
// verdict (Answered through settle) ([requestState]).
type robotTagsStep struct{ cfg config.RobotTagsConfig }

// newRobotTagStep is the robot-tag step of cfg in mode (Config.Mode). In
// report mode robot_tags enforce only annotates, as nothing is refused in
// report mode.
func newRobotTagStep(cfg config.RobotTagsConfig, mode config.Mode) robotTagsStep {
	if mode == config.ModeReport && cfg.Mode == config.RobotTagsEnforce {
		cfg.Mode = config.RobotTagsAnnotate
	}
	return robotTagsStep{cfg: cfg}
}

func (t robotTagsStep) onResponse(resp *http.Response, st *requestState) (*http.Response, outcome) {
	if t.cfg.Mode == config.RobotTagsOff {
		return resp, outcome{}
	}
	_, o := robotTagOutcome(st.Req, resp, st.Agent, t.cfg)
	return resp, o
}
