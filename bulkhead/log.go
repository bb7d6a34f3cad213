package bulkhead

import "github.com/levee-go/levee/internal/logging"

// logRecord is how Config.Logger logs an event: rejections at Debug; permitted and finished
// calls, one of each per call, not at all.
func logRecord(e Event) (logging.Record, bool) {
	if e.Type != EventCallRejected {
		return logging.Record{}, false
	}
	return logging.BulkheadRejected(e.Type.String()), true
}
