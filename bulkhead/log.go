package bulkhead

import "github.com/levee-go/levee/internal/logging"

// logRecord is how Config.Logger logs an event: rejections at Debug, with the error the caller
// received; permitted and finished calls, one of each per call, not at all.
func (b *Bulkhead) logRecord(e Event) (logging.Record, bool) {
	if e.Type != EventCallRejected {
		return logging.Record{}, false
	}
	return logging.BulkheadRejected(e.Type.String(), b.fullErr), true
}
