package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// How one member consumes.
const (
	concurrency = 4  // records handled at once (stream.Concurrency)
	window      = 32 // records taken and not yet sent (stream.Window)
	// maxUncommitted bounds the records taken and not yet below the commit watermark
	// (stream.MaxUncommitted): what one member's crash or drop redelivers, and so its
	// duplicates.
	maxUncommitted = 32
	// inBuffer is the capacity of the channel between the poll loop and the operator. The
	// poll loop asks PollRecords for no more records than the channel has room for, so that
	// handing them over never blocks while it holds a rebalance back (BlockRebalanceOnPoll).
	inBuffer = 64
	// pollTimeout bounds one PollRecords call, so that polls end while every partition is
	// paused and the loop sees its context done.
	pollTimeout = 20 * time.Millisecond
	// maxBatch bounds the results stored before one commit.
	maxBatch = 64
	// maxPause bounds the time one record is held while the breaker refuses it
	// (stream.PauseWhileOpen).
	maxPause = 20 * time.Second

	slidingWindow = 10 // the breaker's SlidingWindowSize, in calls
	minimumCalls  = 5  // the breaker's MinimumNumberOfCalls
	failureRate   = 50 // the breaker's FailureRateThreshold, in percent
	openWait      = 200 * time.Millisecond
	// attempts is the retry's MaxAttempts. The breaker opens after at most 5 failures in a
	// row (half of its window of 10), and the retry does not retry a refusal, which
	// PauseWhileOpen holds instead: with more attempts than that, no record can use up its
	// attempts on failures, so none fails for good.
	attempts = minimumCalls + 3
)

// record is one Kafka record as the member handles it: where it is, and the key and sequence
// number within its key that the producer wrote.
type record struct {
	Partition int32
	Offset    int64
	Epoch     int32
	Key       string
	Seq       int
}

// commitPosition is what the commit watermark reports for a record: its partition, and the
// offset to commit once it and every record before it in the partition are stored, the
// record's offset plus one, with its leader epoch.
func commitPosition(r record) (int32, kgo.EpochOffset) {
	return r.Partition, kgo.EpochOffset{Epoch: r.Epoch, Offset: r.Offset + 1}
}

// memberStats are one member's counters, read by the report.
type memberStats struct {
	opened, halfOpened, closed atomic.Int64 // breaker transitions into each state
	pauses, resumes            atomic.Int64 // PauseFetchPartitions / ResumeFetchPartitions calls
	// pollsPaused counts the PollRecords calls that started after PauseFetchPartitions had
	// returned and ended before ResumeFetchPartitions was called, within one OPEN state;
	// recordsPaused the records those polls returned.
	pollsPaused, recordsPaused atomic.Int64
	orphans                    atomic.Int64 // records polled while no session was open
	failed                     atomic.Int64 // Results with an error (never acknowledged)
	commits, commitErrors      atomic.Int64
	assignments                atomic.Int64
}

// member is one consumer of the group: a kgo client whose fetches the breaker pauses and
// resumes, and for each assignment a session, one stream.Map over the assigned partitions.
type member struct {
	name  string
	topic string
	run   *scenario
	cb    *circuitbreaker.CircuitBreaker
	pipe  *levee.Pipeline[struct{}]
	stats memberStats

	cl atomic.Pointer[kgo.Client]

	base       context.Context // cancelled by kill: sessions stop at once
	cancelBase context.CancelFunc
	poll       context.Context // cancelled by kill and stop: the poll loop ends
	cancelPoll context.CancelFunc
	pollDone   chan struct{}
	killed     atomic.Bool

	mu  sync.Mutex
	cur *session // the session of the current assignment, nil between two

	pauseMu  sync.Mutex
	assigned []int32 // partitions of the current assignment
	paused   bool    // fetches paused: the breaker is OPEN
	epoch    int     // counts pauses and resumes
}

// session is one assignment's stream: records go in through in, the operator handles them
// through the member's pipeline, and the results loop stores each result, acknowledges it to
// the position watermark and commits the positions the watermark reports.
type session struct {
	id     int
	ctx    context.Context
	cancel context.CancelFunc
	in     chan record
	pw     *stream.PositionWatermark[record, int32, kgo.EpochOffset]
	done   chan struct{} // closed when the results loop has ended
	stored atomic.Int64  // results stored by this session
	// committed is the offset last committed per partition; written by the results loop,
	// then, once it has ended, by the revoke.
	committed map[int32]int64
}

// newMember builds the patterns and the client of one member and starts its poll loop.
func newMember(s *scenario, name string) (*member, error) {
	ps, err := levee.NewPatterns(name, levee.Configs{
		Retry: &retry.Config{
			MaxAttempts:      attempts,
			IntervalFunction: levee.Must(retry.FixedInterval(2 * time.Millisecond)),
			RetryErrors:      []error{errFlaky},
		},
		CircuitBreaker: &circuitbreaker.Config{
			SlidingWindowSize:    slidingWindow,
			MinimumNumberOfCalls: minimumCalls,
			FailureRateThreshold: failureRate,
			// One probe: a held record is the probe, and its retry, refused once the probe
			// has failed, holds it again instead of failing it.
			PermittedNumberOfCallsInHalfOpenState: 1,
			WaitDurationInOpenState:               openWait,
			RecordErrors:                          []error{errFlaky},
		},
	})
	if err != nil {
		return nil, err
	}
	m := &member{
		name: name, topic: s.topic, run: s, cb: ps.CircuitBreaker,
		pipe:     levee.DefaultPipeline[struct{}](ps, nil),
		pollDone: make(chan struct{}),
	}
	m.base, m.cancelBase = context.WithCancel(context.Background())
	m.poll, m.cancelPoll = context.WithCancel(m.base)
	m.cb.OnStateChange(m.onStateChange)

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.brokers...),
		kgo.ConsumerGroup(s.group),
		kgo.ConsumeTopics(s.topic),
		kgo.ClientID(name),
		// Eager rebalancing: every rebalance revokes every partition, so a session is one
		// whole assignment and the next one starts from the committed offsets.
		kgo.Balancers(kgo.RoundRobinBalancer()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(m.onAssigned),
		kgo.OnPartitionsRevoked(m.onRevoked),
		kgo.OnPartitionsLost(m.onLost),
		kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.SessionTimeout(6*time.Second),
		kgo.RebalanceTimeout(20*time.Second),
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		m.cancelBase()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.cl.Store(cl)
	go m.pollLoop(cl)
	return m, nil
}

// onStateChange drives the client from the breaker: an OPEN breaker pauses the fetches of
// every assigned partition, HALF_OPEN (the probe) and CLOSED resume them.
func (m *member) onStateChange(_, to circuitbreaker.State) {
	switch to {
	case circuitbreaker.Open:
		m.stats.opened.Add(1)
		m.pause()
		m.run.opened(m)
	case circuitbreaker.HalfOpen:
		m.stats.halfOpened.Add(1)
		m.resume()
	case circuitbreaker.Closed:
		m.stats.closed.Add(1)
		m.resume()
	}
}

func (m *member) pause() {
	m.pauseMu.Lock()
	defer m.pauseMu.Unlock()
	if m.paused {
		return
	}
	if cl := m.cl.Load(); cl != nil {
		cl.PauseFetchPartitions(map[string][]int32{m.topic: m.assigned})
	}
	m.paused = true // only once the pause is in force
	m.epoch++
	m.stats.pauses.Add(1)
}

func (m *member) resume() {
	m.pauseMu.Lock()
	defer m.pauseMu.Unlock()
	if !m.paused {
		return
	}
	m.paused = false // before the resume takes effect
	m.epoch++
	if cl := m.cl.Load(); cl != nil {
		cl.ResumeFetchPartitions(cl.PauseFetchPartitions(nil))
	}
	m.stats.resumes.Add(1)
}

func (m *member) pauseState() (bool, int) {
	m.pauseMu.Lock()
	defer m.pauseMu.Unlock()
	return m.paused, m.epoch
}

// pollLoop polls records and hands them to the current session, asking for no more than its
// input has room for, and allows the rebalance it held back once they are handed over.
//
// While the fetches are paused it polls even when the input is full, one record at most: a
// pause in force returns nothing, and a record it did return would wait in the session's
// pending slot, counted by recordsPaused.
func (m *member) pollLoop(cl *kgo.Client) {
	defer close(m.pollDone)
	var pending []record // polled and not yet handed over, for the session last seen
	var last *session
	for m.poll.Err() == nil {
		m.mu.Lock()
		s := m.cur
		if s != last {
			pending, last = nil, s // a new assignment: the old one's records are redelivered
		}
		pending = handOver(s, pending) // under mu: a revoke closes s.in only once m.cur is not s
		m.mu.Unlock()
		free := 0
		if s != nil && len(pending) == 0 {
			free = cap(s.in) - len(s.in)
		}
		p0, e0 := m.pauseState()
		if free == 0 && (s == nil || !p0) {
			// No session, or its input is full: wait for the operator to take records.
			select {
			case <-m.poll.Done():
			case <-time.After(time.Millisecond):
			}
			continue
		}
		ctx, cancel := context.WithTimeout(m.poll, pollTimeout)
		fs := cl.PollRecords(ctx, max(free, 1))
		cancel()
		p1, e1 := m.pauseState()
		n := fs.NumRecords()
		if p0 && p1 && e0 == e1 {
			m.stats.pollsPaused.Add(1)
			m.stats.recordsPaused.Add(int64(n))
		}
		if n > 0 {
			// The rebalance is held back until AllowRebalance: the current session is the
			// one these records were fetched for (only this loop sends on its input; a
			// session that replaced s during the poll starts empty).
			m.mu.Lock()
			s = m.cur
			if s != last {
				pending, last = nil, s
			}
			fs.EachRecord(func(kr *kgo.Record) {
				r, err := decode(kr)
				if err != nil || s == nil {
					m.stats.orphans.Add(1)
					return
				}
				pending = append(pending, r)
			})
			pending = handOver(s, pending)
			m.mu.Unlock()
		}
		cl.AllowRebalance()
		if fs.IsClientClosed() {
			return
		}
	}
}

// handOver sends the pending records to s's input while it has room, without blocking, and
// returns those left.
func handOver(s *session, pending []record) []record {
	if s == nil {
		return pending
	}
	for len(pending) > 0 {
		select {
		case s.in <- pending[0]:
			pending = pending[1:]
		default:
			return pending
		}
	}
	return pending[:0]
}

// onAssigned starts the session of a new assignment, its fetches paused if the breaker is
// OPEN.
func (m *member) onAssigned(_ context.Context, cl *kgo.Client, assigned map[string][]int32) {
	parts := assigned[m.topic]
	m.stats.assignments.Add(1)
	m.pauseMu.Lock()
	m.assigned = parts
	if m.paused {
		cl.PauseFetchPartitions(map[string][]int32{m.topic: parts})
	}
	m.pauseMu.Unlock()
	if m.killed.Load() {
		return
	}
	s := m.startSession()
	m.mu.Lock()
	m.cur = s
	m.mu.Unlock()
	m.run.logf("%s assigned partitions %v (session %d)", m.name, parts, s.id)
}

// onRevoked ends the session: it finishes the records handed to it, within cfg.revokeDrain,
// drops the rest, and commits the positions below the watermark, the last commit for these
// partitions before their next owner reads from it.
func (m *member) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	m.endSession(ctx, true)
}

// onLost ends the session without committing: the partitions are already someone else's.
func (m *member) onLost(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	m.endSession(ctx, false)
}

func (m *member) endSession(ctx context.Context, commit bool) {
	m.mu.Lock()
	s := m.cur
	m.cur = nil
	m.mu.Unlock()
	m.pauseMu.Lock()
	m.assigned = nil
	m.pauseMu.Unlock()
	if s == nil {
		return
	}
	if m.killed.Load() {
		// Killed: nothing is finished and nothing committed.
		s.cancel()
		<-s.done
		m.run.sessionEnded(m, s, endKilled)
		return
	}
	// The poll loop is not handing records over (BlockRebalanceOnPoll) and no longer sees s.
	close(s.in)
	how := endFinished
	if d := m.run.cfg.revokeDrain; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-s.done:
		case <-timer.C:
			how = endDropped
		}
		timer.Stop()
	} else {
		how = endDropped
	}
	if how == endDropped {
		s.cancel()
		<-s.done
	}
	if commit {
		for try := 0; try < 3; try++ {
			if err := m.commit(ctx, s); err == nil {
				break
			}
		}
	} else {
		how = endLost
	}
	s.cancel()
	m.run.sessionEnded(m, s, how)
}

// startSession starts the operator and the results loop of a new assignment.
func (m *member) startSession() *session {
	ctx, cancel := context.WithCancel(m.base)
	s := &session{
		id:  m.run.nextSession(),
		ctx: ctx, cancel: cancel,
		in:        make(chan record, inBuffer),
		pw:        stream.NewPartitionWatermark(commitPosition),
		done:      make(chan struct{}),
		committed: map[int32]int64{},
	}
	results, err := stream.Map(ctx, s.in, m.pipe, m.run.svc.handle,
		stream.Concurrency(concurrency),
		stream.Window(window),
		stream.OrderByKey(func(r record) string { return r.Key }),
		stream.CommitWatermark(s.pw.Watermark()),
		stream.MaxUncommitted(maxUncommitted),
		stream.PauseWhileOpen(maxPause),
	)
	if err != nil {
		// The options are constants, so this does not happen; a session that cannot start
		// stores nothing and commits nothing, and the run times out reporting it.
		m.run.logf("%s: session %d: %v", m.name, s.id, err)
		close(s.done)
		return s
	}
	go m.deliver(s, results)
	return s
}

// deliver is the results loop: it stores each result (the side effect a duplicate repeats),
// acknowledges it, and commits what the watermark passed before it stores more, so that what
// is stored and not committed stays within the records taken and not below the watermark,
// at most maxUncommitted. A killed session stores nothing more.
func (m *member) deliver(s *session, results <-chan stream.Result[record, struct{}]) {
	defer close(s.done)
	batch := make([]stream.Result[record, struct{}], 0, maxBatch)
	for r := range results {
		batch = append(batch[:0], r)
	more:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		for _, r := range batch {
			if s.ctx.Err() != nil {
				break
			}
			if r.Err != nil {
				// Not acknowledged: the watermark stays below it, and it is redelivered.
				m.stats.failed.Add(1)
				continue
			}
			m.run.store(m, s, r.In)
			s.stored.Add(1)
			s.pw.Ack(r.Index, r.In)
		}
		for s.ctx.Err() == nil {
			if err := m.commit(s.ctx, s); err == nil {
				break
			}
			select {
			case <-s.ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// commit commits, for each partition whose position moved, the offset after the last
// record below the watermark.
func (m *member) commit(ctx context.Context, s *session) error {
	pos := s.pw.Load()
	offsets := map[int32]kgo.EpochOffset{}
	for p, eo := range pos {
		if eo.Offset > s.committed[p] {
			offsets[p] = eo
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	cl := m.cl.Load()
	var rerr error
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{m.topic: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				rerr = err
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
						rerr = errors.Join(rerr, fmt.Errorf("partition %d: %w", p.Partition, err))
					}
				}
			}
		})
	if rerr != nil {
		if ctx.Err() == nil { // a commit cut short by a kill or a drop is no error of the broker's
			m.stats.commitErrors.Add(1)
		}
		return rerr
	}
	m.stats.commits.Add(1)
	for p, eo := range offsets {
		s.committed[p] = eo.Offset
	}
	return nil
}

// kill stops the member as a crash would: its sessions stop at once, whatever they hold, and
// nothing is committed; then the client leaves the group, so that the others take its
// partitions over from the committed offsets.
func (m *member) kill() {
	m.killed.Store(true)
	m.cancelBase()
	<-m.pollDone
	m.mu.Lock()
	s := m.cur
	m.mu.Unlock()
	if s != nil {
		<-s.done
	}
	m.cl.Load().CloseAllowingRebalance()
}

// stop stops the member gracefully: no more polls, then the client leaves the group, whose
// last revoke finishes the session and commits.
func (m *member) stop() {
	m.cancelPoll()
	<-m.pollDone
	m.cl.Load().CloseAllowingRebalance()
	m.cancelBase()
}
