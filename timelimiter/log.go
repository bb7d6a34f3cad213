package timelimiter

import (
	"log/slog"

	"github.com/levee-go/levee/internal/logging"
)

// logRecord is how Config.Logger logs an event: timeouts at Debug; calls that end in time,
// with a success or an error the caller receives, not at all.
func logRecord(e Event) (logging.Record, bool) {
	if e.Type != EventTimeout {
		return logging.Record{}, false
	}
	return logging.Record{Level: slog.LevelDebug, Msg: "time limiter call timed out", Event: e.Type.String(),
		Attrs: logging.WithErr, Err: e.Err}, true
}
