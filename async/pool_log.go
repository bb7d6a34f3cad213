package async

import "github.com/levee-go/levee/internal/logging"

// logPoolRecord is how WorkerPoolConfig.Logger logs an event: refusals at Debug, as a
// bulkhead's; a task's start and end, one of each per task, not at all.
func (p *WorkerPool) logRecord(e WorkerPoolEvent) (logging.Record, bool) {
	if e.Type != EventCallRejected {
		return logging.Record{}, false
	}
	return logging.BulkheadRejected(e.Type.String(), p.fullErr), true
}
