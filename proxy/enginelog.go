package proxy

import (
	"fmt"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/rs/zerolog"
)

// The adapter of goproxy's log (a Printf) to the operator log.

// goproxyLogger adapts zerolog to goproxy's Logger (a Printf). goproxy
// prefixes its messages with "[session] INFO: " or "[session] WARN: ";
// INFO lines (only produced when Verbose is on) become debug records,
// WARN lines warnings, anything else info. The warnings goproxy words
// confusingly (it calls the origin "client" and a client that hangs up a
// problem) are reworded by [goproxyWarningOf], and a client's disconnect is
// logged at debug.
type goproxyLogger struct {
	log zerolog.Logger
}

// goproxyWarning rewords one of goproxy's warning formats: format is
// goproxy's (as given to ctx.Warnf), msg the message, target and error
// the positions of the CONNECT target and of the error among the
// arguments (-1 when absent), client whether the error is on the
// client's side (a disconnect there is logged at debug).
type goproxyWarning struct {
	format        string
	msg           string
	target, error int
	client        bool
}

// goproxyWarnings are the warning formats of goproxy that goproxyLogger
// rewords: the one list of them (TestGoproxyWarningsExist checks each
// against the pinned goproxy module's source).
func goproxyWarnings() [10]goproxyWarning {
	return [...]goproxyWarning{
		{"Cannot handshake client %v %v", "TLS handshake with the client failed (does it trust robotsgate's CA?)", 0, 1, true},
		{"Cannot read request from mitm'd client %v %v", "cannot read a request from the client in an HTTPS session", 0, 1, true},
		{"Cannot write response header from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Cannot flush response header from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Cannot write response from mitm'd client: %v", "cannot write the response to the client", -1, 0, true},
		{"Error copying to client: %s", "cannot write to the client", -1, 0, true},
		{"Error responding to client: %s", "cannot write to the client", -1, 0, true},
		{"Error closing client connection: %s", "cannot close the client connection", -1, 0, true},
		{"Cannot read response from mitm'd server %v", "cannot read the response from the origin", -1, 0, false},
		{"Error dialing to %s: %s", "cannot connect to the origin", 0, 1, false},
	}
}

// goproxyWarningOf maps goproxy's warning format to what it means.
func goproxyWarningOf(format string) (goproxyWarning, bool) {
	for _, w := range goproxyWarnings() {
		if w.format == format {
			return w, true
		}
	}
	return goproxyWarning{}, false
}

// Printf implements goproxy.Logger.
func (l goproxyLogger) Printf(format string, v ...any) {
	if w, ok := goproxyWarningOf(strings.TrimSuffix(strings.TrimPrefix(format, "[%03d] WARN: "), "\n")); ok &&
		strings.HasPrefix(format, "[%03d] WARN: ") && len(v) > 1 {
		l.warning(w, v[0], v[1:])
		return
	}
	// goproxy's warnings quote request URLs and errors holding them.
	msg := enforce.RedactURLsIn(strings.TrimSpace(fmt.Sprintf(format, v...)))
	session := ""
	if strings.HasPrefix(msg, "[") {
		if i := strings.Index(msg, "] "); i > 0 {
			session, msg = msg[1:i], msg[i+2:]
		}
	}
	level := zerolog.InfoLevel
	switch {
	case strings.HasPrefix(msg, "INFO: "):
		level, msg = zerolog.DebugLevel, msg[len("INFO: "):]
	case strings.HasPrefix(msg, "WARN: "):
		level, msg = zerolog.WarnLevel, msg[len("WARN: "):]
	}
	ev := l.log.WithLevel(level).Str("component", "goproxy")
	if session != "" {
		ev = ev.Str("session", session)
	}
	ev.Msg(msg)
}

// warning logs goproxy's warning w of session with its arguments args.
func (l goproxyLogger) warning(w goproxyWarning, session any, args []any) {
	arg := func(i int) string {
		if i < 0 || i >= len(args) {
			return ""
		}
		return enforce.RedactURLsIn(fmt.Sprint(args[i]))
	}
	errText := arg(w.error)
	level := zerolog.WarnLevel
	if w.client && clientGone(errText) {
		level = zerolog.DebugLevel
	}
	ev := l.log.WithLevel(level).Str("component", "goproxy").Str("session", fmt.Sprintf("%03d", session))
	if t := arg(w.target); t != "" {
		ev = ev.Str("target", t)
	}
	ev.Str("error", errText).Msg(w.msg)
}

// clientGone reports whether the error text errText says that the peer
// closed or reset the connection, or that it was closed under way.
func clientGone(errText string) bool {
	for _, s := range []string{"EOF", "broken pipe", "connection reset", "use of closed network connection", "context canceled"} {
		if strings.Contains(errText, s) {
			return true
		}
	}
	return false
}
