package proxy

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce"
)

// goproxyLogger adapts zerolog to goproxy's Logger (a Printf). goproxy
// prefixes its messages with "[session] INFO: " or "[session] WARN: ";
// INFO lines (only produced when Verbose is on) become debug records,
// WARN lines warnings, anything else info.
type goproxyLogger struct {
	log zerolog.Logger
}

// Printf implements goproxy.Logger.
func (l goproxyLogger) Printf(format string, v ...any) {
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

// httpErrorLogWriter feeds net/http.Server's ErrorLog (TLS handshake
// errors, bad requests, ...) to zerolog at debug level: they are client
// faults, not operator problems.
type httpErrorLogWriter struct {
	log zerolog.Logger
}

func (w httpErrorLogWriter) Write(p []byte) (int, error) {
	w.log.Debug().Str("component", "http").Msg(enforce.RedactURLsIn(strings.TrimSpace(string(p))))
	return len(p), nil
}
