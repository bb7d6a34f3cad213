package async

import (
	"context"
	"iter"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/event"
)

// WorkerPoolEvent is what a worker pool publishes to its subscribers: the pool's name, the
// type and the time the event was created. It is the semaphore bulkhead's event; only the
// timing of its types differs (see the constants below).
type WorkerPoolEvent = bulkhead.Event

// WorkerPoolEventType is the kind of a worker pool event, bulkhead.EventType.
type WorkerPoolEventType = bulkhead.EventType

// The event types with the worker pool's timing.
const (
	// EventCallPermitted: a task started running on a worker (not when it was accepted: a
	// queued task is permitted when it leaves the queue).
	EventCallPermitted = bulkhead.EventCallPermitted
	// EventCallRejected: Submit refused a task because the pool was full.
	EventCallRejected = bulkhead.EventCallRejected
	// EventCallFinished: a task that had started returned, whatever its outcome.
	EventCallFinished = bulkhead.EventCallFinished
)

// Subscribe registers fn to receive every event of p from now on and returns the function that
// unsubscribes it. fn runs synchronously on the goroutine that caused the event (a worker for
// CALL_PERMITTED and CALL_FINISHED, the submitter for CALL_REJECTED), outside every lock of p
// (it may call p's other methods, but not Close or Shutdown, which wait for the worker it runs
// on), and must be quick. Events are built only while someone subscribes.
func (p *WorkerPool) Subscribe(fn func(WorkerPoolEvent)) (unsubscribe func()) {
	return p.events.Subscribe(fn)
}

// Events returns a channel that receives the pool's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as p. A nil p returns a closed
// channel and a count of 0.
func (p *WorkerPool) Events(ctx context.Context, buffer int) (events <-chan WorkerPoolEvent, dropped func() uint64) {
	if p == nil {
		return event.Closed[WorkerPoolEvent]()
	}
	return p.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the pool's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil p yields nothing.
func (p *WorkerPool) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[WorkerPoolEvent], dropped func() uint64) {
	if p == nil {
		return event.Empty[WorkerPoolEvent]()
	}
	return p.events.Seq(ctx, buffer, nil)
}

func (p *WorkerPool) publish(t WorkerPoolEventType) {
	if p.events.Active() {
		p.events.Publish(WorkerPoolEvent{Name: p.name, Type: t, Time: time.Now()})
	}
}

// WorkerPoolMetrics is a snapshot of a worker pool, as Resilience4j's
// ThreadPoolBulkhead.Metrics. All figures are read together, under the pool's lock.
type WorkerPoolMetrics struct {
	// CoreThreadPoolSize and MaximumThreadPoolSize are the configured sizes.
	CoreThreadPoolSize    int
	MaximumThreadPoolSize int
	// ThreadPoolSize is the number of workers alive now.
	ThreadPoolSize int
	// ActiveThreadCount is the number of workers running a task.
	ActiveThreadCount int
	// AvailableThreadCount is MaximumThreadPoolSize - ActiveThreadCount.
	AvailableThreadCount int
	// QueueDepth is the number of tasks waiting in the queue.
	QueueDepth int
	// QueueCapacity is the queue's capacity (0 for NoQueue).
	QueueCapacity int
	// RemainingQueueCapacity is QueueCapacity - QueueDepth.
	RemainingQueueCapacity int
}

// Metrics returns a snapshot of p.
func (p *WorkerPool) Metrics() WorkerPoolMetrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	return WorkerPoolMetrics{
		CoreThreadPoolSize:     p.core,
		MaximumThreadPoolSize:  p.max,
		ThreadPoolSize:         p.workers,
		ActiveThreadCount:      p.active,
		AvailableThreadCount:   p.max - p.active,
		QueueDepth:             p.queue.len,
		QueueCapacity:          p.queueCap,
		RemainingQueueCapacity: p.queueCap - p.queue.len,
	}
}
