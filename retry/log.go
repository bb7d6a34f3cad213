package retry

import (
	"log/slog"

	"github.com/levee-go/levee/internal/logging"
)

// logRecord is how Config.Logger logs an event: each retry and each success after retries at
// Debug, retries exhausted (or stopped) at Info; an error that is not retried not at all, as
// it goes back to the caller at once.
func logRecord(e Event) (logging.Record, bool) {
	r := logging.Record{Event: e.Type.String(), Attempt: e.NumberOfRetryAttempts, Err: e.LastErr}
	switch e.Type {
	case EventRetry:
		r.Level, r.Msg, r.Attrs = slog.LevelDebug, "retry attempt failed", logging.WithAttempt|logging.WithWait|logging.WithErr
		r.Wait = e.WaitInterval
	case EventSuccess:
		r.Level, r.Msg, r.Attrs = slog.LevelDebug, "retry succeeded after retries", logging.WithAttempt
	case EventError:
		r.Level, r.Msg, r.Attrs = slog.LevelInfo, "retries exhausted", logging.WithAttempt|logging.WithErr
	default: // IGNORED_ERROR
		return r, false
	}
	return r, true
}
