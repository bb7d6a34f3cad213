package ratelimiter

import (
	"log/slog"

	"github.com/levee-go/levee/internal/logging"
)

// logRecord is how Config.Logger logs an event: refusals (and waits their context ended) and
// drains at Debug; successful acquisitions, one per call, not at all.
func logRecord(e Event) (logging.Record, bool) {
	r := logging.Record{Level: slog.LevelDebug, Event: e.Type.String()}
	switch e.Type {
	case EventFailedAcquire:
		r.Msg, r.Attrs, r.Err = "rate limiter permission not acquired", logging.WithErr, e.Err
	case EventDrained:
		r.Msg = "rate limiter permissions drained"
	default: // SUCCESSFUL_ACQUIRE
		return r, false
	}
	return r, true
}
