package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/internal/safetext"
	"github.com/robotsgate/robotsgate/proxy"
)

// newLogger returns the operator log writing to w at level: JSON lines,
// or zerolog's console format when format is "console", or "auto" and w
// is a terminal. The console writer is slow; robotsgate keeps per-request
// logging at debug level.
func newLogger(level, format string, w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("log_level: %q is not one of debug, info, warn, error", level)
	}
	console := false
	switch format {
	case "console":
		console = true
	case "json":
	case "auto", "":
		console = isTerminal(w)
	default:
		return zerolog.Nop(), fmt.Errorf("log_format: %q is not one of auto, json, console", format)
	}
	if console {
		cw := proxy.ConsoleWriter(w, false) // escapes CR/LF in messages too (log injection)
		cw.TimeFormat = time.TimeOnly
		// Field values zerolog does not quote (arrays, objects) are
		// written as JSON, C1 and bidi controls raw.
		cw.FormatFieldValue = func(i any) string { return safetext.Escape(fmt.Sprintf("%s", i)) }
		w = cw
	} else {
		w = safetext.Writer(w) // zerolog writes C1 and bidi controls raw
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
