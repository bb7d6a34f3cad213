package leveeredis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/safe"
	"github.com/redis/go-redis/v9"
)

// BreakerConfig configures a SharedBreaker. The zero value of every field means the default
// shown in brackets.
type BreakerConfig struct {
	// KeyPrefix starts the Redis keys and the channel of the breaker: the record is
	// KeyPrefix+"{"+name+"}" (the name in a hash tag, so that every key of one breaker is in
	// one Redis Cluster slot), the HALF_OPEN trial lease that key+":trial", and transitions are
	// published on key+":transitions". ["levee:cb:"]
	KeyPrefix string
	// StoreTimeout bounds each round trip to Redis. >= 1ms [20ms, Envoy's default].
	StoreTimeout time.Duration
	// RetryInterval is how often a breaker whose store failed tries it again, to publish
	// what changed locally meanwhile and adopt what changed elsewhere. >= 1ms [1s].
	RetryInterval time.Duration
	// TrialLease is how long one replica holds the HALF_OPEN trial of an opening before
	// another replica may take it over (the holder crashed or never got its probes).
	// >= 1ms [the breaker's MaxWaitDurationInHalfOpenState, or 10s when that is 0].
	TrialLease time.Duration
	// Logger, when set, receives one record when the store becomes unavailable and one when
	// it is available again (never one per call). [nil: no logging]
	Logger *slog.Logger
	// ReplicaID names this replica as the origin of the records it writes (BreakerRecord.Origin,
	// BreakerTransition.Origin). 1 to 128 characters among letters, digits and . _ : / @ -.
	// [host name and pid, "<host>:<pid>", with "/2", "/3" ... for the second and later
	// SharedBreakers of one process]
	ReplicaID string
}

// BreakerRecord is the shared record of a breaker as the store holds it, for operators and
// tests: Load reads it.
type BreakerRecord struct {
	// State is the fleet's state (CLOSED, OPEN, DISABLED, FORCED_OPEN or METRICS_ONLY; HALF_OPEN
	// is never written, every replica derives it from the end of OPEN). CLOSED when there is
	// no record.
	State circuitbreaker.State
	// Version grows by one with every accepted transition; 0 when there is no record.
	Version int64
	// OpenRemaining is what is left of OPEN's wait on the store's clock when it answered; 0
	// in other states and once the wait is over. OpenUntil is the same instant on this
	// replica's clock (the zero time when OpenRemaining is 0).
	OpenRemaining time.Duration
	OpenUntil     time.Time
	// Origin is the ReplicaID of the replica that wrote the record ("" when none).
	Origin string
}

// BreakerTransition is a transition of the local breaker as a SharedBreaker saw it, given to
// the functions registered with OnTransition.
type BreakerTransition struct {
	From, To circuitbreaker.State
	// Adopted is true for a transition applied from the fleet's record (another replica
	// decided it), false for one this replica decided.
	Adopted bool
	// Origin is the ReplicaID of the replica that decided it: the record's origin when
	// adopted, this replica's otherwise.
	Origin string
	// Version is the version of the adopted record; 0 for a local transition (its version
	// is known once the store accepts it: see Version and Load).
	Version int64
}

// BreakerStoreMetrics counts what a SharedBreaker did with the store since New. Every count is
// for this replica only.
type BreakerStoreMetrics struct {
	// Published counts this replica's transitions the store accepted.
	Published uint64
	// Adopted counts transitions of other replicas applied to the local breaker.
	Adopted uint64
	// Conflicts counts this replica's transitions the store refused because another replica
	// had written a newer record first (the local breaker then adopted that record).
	Conflicts uint64
	// StoreErrors counts failed round trips (timeout, connection refused, error reply).
	StoreErrors uint64
	// LocalDecisions counts HALF_OPEN permission requests decided by the local breaker alone
	// because the store was unavailable.
	LocalDecisions uint64
	// TrialRefusals counts calls refused because another replica holds the HALF_OPEN trial.
	TrialRefusals uint64
	// StoreAvailable is false from a failed round trip until the next successful one.
	StoreAvailable bool
}

// SharedBreaker shares the transitions of a local circuitbreaker.CircuitBreaker with the
// breakers of the same name in other replicas, through Redis.
//
// Windows stay local: each replica records its own calls in its own breaker, so a call in
// CLOSED costs no round trip and allocates nothing more than circuitbreaker.Execute. What is
// shared is a small versioned record (state, version, end of OPEN on the Redis clock, origin),
// changed only by a compare-and-swap script that publishes the change in the same step:
//
//   - when the local breaker changes state (on its thresholds, its timers or a
//     TransitionToXxxState call), the change is written with a compare-and-swap on the
//     version the replica last saw, by a background goroutine, never on the caller's
//     goroutine. HALF_OPEN is not written: every replica derives it from OPEN's end.
//   - the other replicas receive the published record and apply it to their breakers at once
//     (an OPEN for the wait remaining on the store's clock, with TransitionToOpenStateFor), so
//     an OPEN reaches them one publish after it was decided, with no polling. A transition
//     applied from the store is not written back.
//   - HALF_OPEN probes are bounded for the fleet: the first replica to ask for a probe after
//     the end of an OPEN takes that opening's trial (a lease of TrialLease in Redis) and runs
//     PermittedNumberOfCallsInHalfOpenState probes in its own breaker; the other replicas
//     refuse in HALF_OPEN until that replica writes CLOSED or OPEN, which they then adopt.
//     Taking the trial is one round trip, made before the call; nothing is held while the
//     call runs.
//
// Reconciliation: the record with the higher version wins; a replica whose write was refused
// adopts the record it lost to. OPEN wins ties: a proposed OPEN or FORCED_OPEN is accepted over
// a CLOSED record even when the proposer had not seen that record's version.
//
// A transition into the state the breaker is already in (TransitionToOpenStateFor on an OPEN
// breaker, which only moves the end of the wait) publishes no event in the core breaker and is
// not shared; neither is a transition the local breaker refuses (a record of OPEN reaching a
// METRICS_ONLY breaker).
//
// When the store fails (StoreTimeout exceeded, Redis down) each breaker goes on alone with
// Resilience4j's local behaviour, HALF_OPEN included; the failure is counted
// (BreakerStoreMetrics.StoreErrors) and logged once per episode. Every RetryInterval the
// replica tries again; when the store answers, the replica writes its state if it changed
// meanwhile (by the rules above) or else adopts the record if a newer one exists. A
// subscription that could not be made (see NewSharedBreaker) is tried again at the same
// pace; a lost pub/sub connection is re-established by go-redis; each (re-)subscription
// reads the record again.
//
// Admit and RetryAfter make it a levee.Admitter and levee.RetryAdvisor, for levee.Patterns'
// Admission field and the servers' ConcurrencyLimiter field; Execute and Decorator are the
// allocation-free way for a pipeline that holds the *SharedBreaker itself.
//
// Give the client the options that make a frozen Redis fail fast (ContextTimeoutEnabled, and
// ReadTimeout and WriteTimeout near StoreTimeout); the client is the caller's and Close does
// not close it.
type SharedBreaker struct {
	cb      *circuitbreaker.CircuitBreaker
	client  redis.UniversalClient
	cfg     BreakerConfig
	origin  string
	key     string
	trialK  string
	channel string

	refusal    circuitbreaker.CallNotPermittedError
	withResult bool // RecordResultPredicate or TransitionOnResult set: Execute reports values

	known    atomic.Pointer[record] // the newest record seen
	degraded atomic.Bool
	dirty    atomic.Bool  // a local transition waits to be written
	applying atomic.Int32 // 1 + the state being applied from the store, 0 when none

	trialMu sync.Mutex
	trial   trialCache

	wake   chan struct{}
	pubsub *redis.PubSub
	cancel context.CancelFunc
	done   chan struct{}
	unsub  func()
	closed atomic.Bool

	listenMu  sync.Mutex
	listeners []func(BreakerTransition)
	adopting  atomic.Pointer[record] // the record being applied, during adoptIfNewer

	published, adopted, conflicts, storeErrors, localDecisions, trialRefusals atomic.Uint64
}

// record is the shared record as a replica sees it: remaining is the OPEN wait left when the
// store answered.
type record struct {
	version   int64
	state     circuitbreaker.State
	remaining time.Duration
	origin    string
}

// trialCache remembers the answer about the trial of one version until the local instant
// until (on the monotonic clock).
type trialCache struct {
	version int64
	mine    bool
	until   time.Time
}

// NewSharedBreaker shares the transitions of cb with the replicas that use the same name and
// key prefix on the same Redis, through client (any go-redis client: Client, ClusterClient,
// Ring, failover). It reads the record once (applying it when it is not CLOSED; this waits up
// to StoreTimeout) and starts one goroutine that subscribes to the breaker's channel, serves
// the subscription and writes local transitions; Close stops it. The subscription is a round
// trip like the others, bounded by StoreTimeout (connecting, and the SUBSCRIBE command; the
// record is read again when Redis confirms it): when Redis does not answer in time (frozen,
// unreachable) the failure counts in StoreMetrics().StoreErrors, the breaker goes on from the
// local breaker and the record last read, as on any store failure, and the goroutine tries
// the subscription again every RetryInterval, reading the record each time, until one
// succeeds. NewSharedBreaker itself never waits for the subscription. Use cb only through the
// SharedBreaker from then on (Execute, Acquire, Decorator): the local breaker's own Execute
// and Acquire skip the fleet's HALF_OPEN trial. A store that does not answer does not make
// New fail: the breaker starts local. It returns an error naming the field for an
// out-of-range BreakerConfig value, for a nil cb or client, and for a *redis.Client or
// *redis.ClusterClient whose Options().ContextTimeoutEnabled is false (go-redis would then
// ignore StoreTimeout, and a frozen Redis would hold a HALF_OPEN Admit for the client's
// ReadTimeout).
func NewSharedBreaker(cb *circuitbreaker.CircuitBreaker, client redis.UniversalClient, cfg BreakerConfig) (*SharedBreaker, error) {
	if cb == nil {
		return nil, errors.New("leveeredis: nil *circuitbreaker.CircuitBreaker")
	}
	if client == nil {
		return nil, errors.New("leveeredis: nil redis client")
	}
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = "levee:cb:"
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = 20 * time.Millisecond
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Second
	}
	if cfg.TrialLease == 0 {
		cfg.TrialLease = cb.Config().MaxWaitDurationInHalfOpenState
		if cfg.TrialLease == 0 {
			cfg.TrialLease = 10 * time.Second
		}
	}
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = defaultReplicaID(&breakerSeq)
	} else if err := checkReplicaID(cfg.ReplicaID); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"StoreTimeout", cfg.StoreTimeout}, {"RetryInterval", cfg.RetryInterval}, {"TrialLease", cfg.TrialLease}} {
		if f.d < time.Millisecond {
			return nil, fmt.Errorf("leveeredis: %s must be >= 1ms, got %v", f.name, f.d)
		}
	}
	key := cfg.KeyPrefix + "{" + cb.Name() + "}"
	sb := &SharedBreaker{
		cb: cb, client: client, cfg: cfg,
		origin:  cfg.ReplicaID,
		key:     key,
		trialK:  key + ":trial",
		channel: key + ":transitions",
		refusal: circuitbreaker.CallNotPermittedError{Name: cb.Name(), State: circuitbreaker.HalfOpen},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	bc := cb.Config()
	sb.withResult = bc.RecordResultPredicate != nil || bc.TransitionOnResult != nil
	sb.known.Store(&record{})
	ctx, cancel := context.WithCancel(context.Background())
	sb.cancel = cancel
	// No channel yet, so no connection: run subscribes, with the store timeout. (go-redis's
	// Subscribe with channels would connect with ctx, which has no deadline, and so wait up
	// to the client's ReadTimeout for a frozen Redis.)
	sb.pubsub = client.Subscribe(ctx)
	sb.unsub = cb.OnStateChange(sb.onStateChange)
	sb.reconcile(ctx)
	go sb.run(ctx)
	return sb, nil
}

// CircuitBreaker returns the local breaker.
func (sb *SharedBreaker) CircuitBreaker() *circuitbreaker.CircuitBreaker { return sb.cb }

// Origin returns the identifier this replica writes in the records it publishes: its
// BreakerConfig.ReplicaID.
func (sb *SharedBreaker) Origin() string { return sb.origin }

// Version returns the version of the newest shared record this replica has seen (0 before
// any).
func (sb *SharedBreaker) Version() int64 { return sb.known.Load().version }

// Record returns the newest shared record this replica has seen, without a round trip;
// OpenUntil is then estimated from when it was received. Load asks the store.
func (sb *SharedBreaker) Record() BreakerRecord {
	r := sb.known.Load()
	return BreakerRecord{State: r.state, Version: r.version, Origin: r.origin, OpenRemaining: r.remaining}
}

// Load reads the shared record from the store (one round trip bounded by StoreTimeout and
// ctx), for operators, status pages and tests. It changes nothing locally; an error is the
// store's (a failure also counts in StoreMetrics().StoreErrors).
func (sb *SharedBreaker) Load(ctx context.Context) (BreakerRecord, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	_, rec, err := sb.runScript(ctx, breakerLoadScript, []string{sb.key})
	if err != nil {
		return BreakerRecord{}, fmt.Errorf("leveeredis: load the record of breaker %q: %w", sb.cb.Name(), err)
	}
	out := BreakerRecord{State: rec.state, Version: rec.version, Origin: rec.origin, OpenRemaining: rec.remaining}
	if rec.remaining > 0 {
		out.OpenUntil = time.Now().Add(rec.remaining)
	}
	return out, nil
}

// OnTransition registers fn to receive every transition of the local breaker, marked as
// adopted from the fleet or decided here, with the replica that decided it. fn runs on the
// goroutine of the transition and must not block; the returned function unregisters it.
func (sb *SharedBreaker) OnTransition(fn func(BreakerTransition)) (unregister func()) {
	if fn == nil {
		return func() {}
	}
	sb.listenMu.Lock()
	defer sb.listenMu.Unlock()
	box := &fn
	sb.listeners = append(sb.listeners, func(t BreakerTransition) { (*box)(t) })
	idx := len(sb.listeners) - 1
	return func() {
		sb.listenMu.Lock()
		defer sb.listenMu.Unlock()
		if idx < len(sb.listeners) {
			sb.listeners[idx] = nil
		}
	}
}

func (sb *SharedBreaker) notify(t BreakerTransition) {
	sb.listenMu.Lock()
	ls := sb.listeners
	sb.listenMu.Unlock()
	for _, fn := range ls {
		if fn != nil {
			fn(t)
		}
	}
}

// StoreMetrics returns the counts of the breaker's dealings with the store.
func (sb *SharedBreaker) StoreMetrics() BreakerStoreMetrics {
	return BreakerStoreMetrics{
		Published: sb.published.Load(), Adopted: sb.adopted.Load(), Conflicts: sb.conflicts.Load(),
		StoreErrors: sb.storeErrors.Load(), LocalDecisions: sb.localDecisions.Load(),
		TrialRefusals: sb.trialRefusals.Load(), StoreAvailable: !sb.degraded.Load(),
	}
}

// Close stops the goroutine and the subscription NewSharedBreaker started and detaches from
// the local breaker, which keeps working alone; an attempt to subscribe under way ends within
// StoreTimeout. The client is not closed. Calling Close again does nothing and returns nil.
func (sb *SharedBreaker) Close() error {
	if !sb.closed.CompareAndSwap(false, true) {
		return nil
	}
	sb.unsub()
	sb.cancel()
	err := sb.pubsub.Close()
	<-sb.done
	return err
}

// Acquire asks to run one call, as circuitbreaker.CircuitBreaker.Acquire (Resilience4j's
// tryAcquirePermission), with the HALF_OPEN trial shared by the fleet: when the local breaker
// is HALF_OPEN, or OPEN with its wait over, the permission is asked of the store first (one
// round trip of at most StoreTimeout, bounded by ctx), and refused with a
// *circuitbreaker.CallNotPermittedError (State HALF_OPEN) while another replica holds the
// trial; such a refusal is counted in StoreMetrics().TrialRefusals, not in the local
// breaker's metrics or events, and allocates nothing. The answer is remembered until the
// version or the lease changes, so the other replicas refuse without a round trip. When the
// store does not answer, the local breaker decides alone. In every other state it is the
// local Acquire, with no round trip. The returned Permit is the local breaker's: report the
// call on it exactly once.
func (sb *SharedBreaker) Acquire(ctx context.Context) (circuitbreaker.Permit, error) {
	if err := sb.admit(ctx); err != nil {
		return circuitbreaker.Permit{}, err
	}
	p, err := sb.cb.Acquire()
	if err != nil {
		return p, err
	}
	if sb.cb.State() == circuitbreaker.HalfOpen && !sb.holdsTrial() {
		p.Release() // the breaker reached HALF_OPEN between the check and the permit
		return circuitbreaker.Permit{}, sb.refuse()
	}
	return p, nil
}

// Execute runs call through sb, as circuitbreaker.Execute (Resilience4j's
// decorateCheckedSupplier) on a Permit from Acquire, so that the fleet's HALF_OPEN trial
// bounds it: a refused call is not run and returns a *circuitbreaker.CallNotPermittedError; a
// nil error records a success (or a failure when RecordResultPredicate matches the value); an
// error is reported with Permit.OnError (Permit.OnResult when RecordResultPredicate or
// TransitionOnResult is set); the caller's own cancellation and runtime.Goexit release the
// permit unrecorded; a panic is recorded as a failure and returned as a *levee.PanicError.
// A nil ctx means context.Background(); a nil call returns levee.ErrNilCall and a nil sb
// circuitbreaker.ErrNilCircuitBreaker, without running anything. No lock is held and no round
// trip is made while call runs; the success path in CLOSED allocates nothing.
func Execute[T any](ctx context.Context, sb *SharedBreaker, call func(context.Context) (T, error)) (v T, err error) {
	if sb == nil {
		return v, circuitbreaker.ErrNilCircuitBreaker
	}
	if call == nil {
		return v, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	p, err := sb.Acquire(ctx)
	if err != nil {
		return v, err
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			var zero T
			v, err = zero, safe.NewPanicError(r)
			p.OnError(err)
			return
		}
		p.Release() // runtime.Goexit: nothing learnt about the dependency
	}()
	v, err = call(ctx)
	returned = true
	switch {
	case err == nil && !sb.withResult:
		p.OnSuccess()
	case err == nil:
		p.OnResult(v, nil)
	case safe.CallerCancelled(ctx, err):
		p.Release()
	case sb.withResult:
		p.OnResult(v, err)
	default:
		p.OnError(err)
	}
	return v, err
}

// Decorator returns sb as a layer of a levee pipeline, for levee.Pipeline.With: each run is
// Execute with the pipeline's inner layers as the call. A nil sb gives a layer that returns
// circuitbreaker.ErrNilCircuitBreaker without running them.
func Decorator[T any](sb *SharedBreaker) levee.Decorator[T] {
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return Execute(ctx, sb, next)
	}
}

func (sb *SharedBreaker) refuse() error {
	sb.trialRefusals.Add(1)
	return &sb.refusal
}

// admit is the fleet's HALF_OPEN check. CLOSED and every state but OPEN past its wait and
// HALF_OPEN return nil after one atomic load.
func (sb *SharedBreaker) admit(ctx context.Context) error {
	switch sb.cb.State() {
	case circuitbreaker.HalfOpen:
	case circuitbreaker.Open:
		if sb.cb.RemainingWaitInOpenState() > 0 {
			return nil // the local breaker refuses by itself
		}
	default:
		return nil
	}
	for range 2 {
		if sb.degraded.Load() {
			sb.localDecisions.Add(1)
			return nil
		}
		rec := sb.known.Load()
		if rec.state != circuitbreaker.Open || sb.dirty.Load() {
			return nil // the local breaker's own trial: nothing shared to bound it
		}
		sb.trialMu.Lock()
		c := sb.trial
		sb.trialMu.Unlock()
		if c.version == rec.version && time.Now().Before(c.until) {
			if c.mine {
				return nil
			}
			return sb.refuse()
		}
		code, got, err := sb.runScript(ctx, breakerTrialScript, []string{sb.key, sb.trialK},
			rec.version, sb.origin, sb.cfg.TrialLease.Milliseconds())
		if err != nil {
			sb.localDecisions.Add(1)
			sb.poke() // the goroutine retries the store
			return nil
		}
		switch code {
		case 1, 0:
			sb.trialMu.Lock()
			sb.trial = trialCache{version: rec.version, mine: code == 1, until: time.Now().Add(got.remaining)}
			sb.trialMu.Unlock()
			if code == 1 {
				return nil
			}
			return sb.refuse()
		case 2:
			return sb.refuse() // the store's clock says OPEN still
		}
		sb.adoptIfNewer(got) // -1: the record moved on; ask again about the new one
	}
	return nil
}

func (sb *SharedBreaker) holdsTrial() bool {
	rec := sb.known.Load()
	if rec.state != circuitbreaker.Open || sb.dirty.Load() || sb.degraded.Load() {
		return true
	}
	sb.trialMu.Lock()
	defer sb.trialMu.Unlock()
	return sb.trial.version == rec.version && sb.trial.mine
}

// onStateChange runs on the goroutine of every local transition. A transition the breaker
// makes while applying a record from the store is not written back, nor is a move out of
// HALF_OPEN by a replica that does not hold the shared trial (its HALF_OPEN ran no probe: it
// left on MaxWaitDurationInHalfOpenState, and the trial's holder decides for the fleet).
func (sb *SharedBreaker) onStateChange(from, to circuitbreaker.State) {
	if sb.applying.Load() == int32(to)+1 {
		if rec := sb.adopting.Load(); rec != nil {
			sb.notify(BreakerTransition{From: from, To: to, Adopted: true, Origin: rec.origin, Version: rec.version})
		}
		return
	}
	sb.notify(BreakerTransition{From: from, To: to, Origin: sb.origin})
	if from == circuitbreaker.HalfOpen && !sb.holdsTrial() {
		return
	}
	sb.dirty.Store(true)
	select {
	case sb.wake <- struct{}{}:
	default:
	}
}

// run serves the breaker until ctx ends: it subscribes (again every RetryInterval while the
// subscription fails), writes local transitions, applies the records published, and retries
// the store every RetryInterval while it is unavailable.
func (sb *SharedBreaker) run(ctx context.Context) {
	defer close(sb.done)
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	msgs := sb.subscribe(ctx) // nil until subscribed: that case never fires
	armed := false
	for {
		if (msgs == nil || sb.degraded.Load()) && !armed && ctx.Err() == nil {
			retry.Reset(sb.cfg.RetryInterval)
			armed = true
		}
		select {
		case <-ctx.Done():
			return
		case <-sb.wake:
			sb.publishLocal(ctx)
		case <-retry.C:
			armed = false
			if msgs == nil {
				if msgs = sb.subscribe(ctx); msgs != nil {
					continue // Redis's confirmation reconciles
				}
			}
			sb.reconcile(ctx)
		case m, ok := <-msgs:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					sb.reconcile(ctx) // (re)subscribed: what was published meanwhile is lost
				}
			case *redis.Message:
				if rec, ok := parseMessage(m.Payload); ok {
					sb.adoptIfNewer(rec)
				}
			}
		}
	}
}

// subscribe subscribes to the breaker's channel, connecting if need be, within StoreTimeout,
// and returns the channel of the subscription's messages, the first of them Redis's
// confirmation. It returns nil when ctx ended (Close) or the store failed, which then counts
// as any failed round trip.
func (sb *SharedBreaker) subscribe(ctx context.Context) <-chan any {
	sctx, cancel := context.WithTimeout(ctx, sb.cfg.StoreTimeout)
	err := sb.pubsub.Subscribe(sctx, sb.channel)
	cancel()
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		sb.storeFailed(err)
		return nil
	}
	return sb.pubsub.ChannelWithSubscriptions()
}

// reconcile brings the replica and the store together after a (re)subscription or a store
// failure: a pending local transition is written, else a newer record is adopted.
func (sb *SharedBreaker) reconcile(ctx context.Context) {
	if sb.dirty.Load() {
		sb.publishLocal(ctx)
		return
	}
	_, rec, err := sb.runScript(ctx, breakerLoadScript, []string{sb.key})
	if err != nil {
		return
	}
	if cur := sb.known.Load(); rec.version < cur.version {
		// The store lost the record (restarted without persistence, flushed, evicted):
		// start again from its version and write the local state if it is not the store's.
		sb.known.Store(&rec)
		if st := sb.cb.State(); st != circuitbreaker.HalfOpen && st != rec.state {
			sb.dirty.Store(true)
			sb.publishLocal(ctx)
		}
		return
	}
	sb.adoptIfNewer(rec)
}

// publishLocal writes the local state with a compare-and-swap on the version last seen.
func (sb *SharedBreaker) publishLocal(ctx context.Context) {
	if !sb.dirty.Swap(false) {
		return
	}
	st := sb.cb.State()
	if st == circuitbreaker.HalfOpen {
		return // follows from OPEN's end; the trial's outcome is written
	}
	var wait int64
	if st == circuitbreaker.Open {
		wait = sb.cb.RemainingWaitInOpenState().Microseconds()
	}
	base := sb.known.Load()
	code, rec, err := sb.runScript(ctx, breakerCASScript, []string{sb.key},
		base.version, int(st), wait, sb.origin, sb.channel)
	if err != nil {
		sb.dirty.Store(true) // written once the store answers again
		return
	}
	if code == 1 {
		sb.published.Add(1)
		sb.store(rec)
		return
	}
	sb.conflicts.Add(1)
	sb.adoptIfNewer(rec)
}

// store installs rec as the newest record seen, unless a newer one is already there.
func (sb *SharedBreaker) store(rec record) bool {
	for {
		cur := sb.known.Load()
		if rec.version <= cur.version {
			return false
		}
		if sb.known.CompareAndSwap(cur, &rec) {
			return true
		}
	}
}

// adoptIfNewer applies a record of a higher version than the one last seen to the local
// breaker, where it replaces a local transition not written yet, except a local OPEN or
// FORCED_OPEN over a CLOSED record: OPEN wins, and is written on top of that record. The
// replica's own records are not applied again.
func (sb *SharedBreaker) adoptIfNewer(rec record) {
	if !sb.store(rec) || rec.origin == sb.origin {
		return
	}
	if st := sb.cb.State(); rec.state == circuitbreaker.Closed && sb.dirty.Load() &&
		(st == circuitbreaker.Open || st == circuitbreaker.ForcedOpen) {
		return
	}
	sb.dirty.Store(false)
	sb.adopting.Store(&rec)
	sb.applying.Store(int32(rec.state) + 1)
	defer sb.applying.Store(0)
	defer sb.adopting.Store(nil)
	var err error
	switch rec.state {
	case circuitbreaker.Closed:
		if sb.cb.State() == circuitbreaker.Closed {
			return
		}
		err = sb.cb.TransitionToClosedState()
	case circuitbreaker.Open:
		err = sb.cb.TransitionToOpenStateFor(rec.remaining)
	case circuitbreaker.Disabled:
		err = sb.cb.TransitionToDisabledState()
	case circuitbreaker.ForcedOpen:
		err = sb.cb.TransitionToForcedOpenState()
	case circuitbreaker.MetricsOnly:
		err = sb.cb.TransitionToMetricsOnlyState()
	default:
		return
	}
	if err == nil {
		sb.adopted.Add(1)
	}
}

// runScript runs s with the store timeout and decodes its {code, version, state, remaining,
// origin} reply. A failure marks the store unavailable and a success after one available
// again, each logged once; a failure because ctx ended (the caller gave up, or Close) says
// nothing about the store and is neither counted nor logged.
func (sb *SharedBreaker) runScript(ctx context.Context, s *redis.Script, keys []string, args ...any) (int64, record, error) {
	sctx, cancel := context.WithTimeout(ctx, sb.cfg.StoreTimeout)
	defer cancel()
	res, err := s.Run(sctx, sb.client, keys, args...).Slice()
	var rec record
	var code int64
	if err == nil {
		code, rec, err = decodeReply(res)
	}
	if err != nil && ctx.Err() != nil {
		return 0, rec, err
	}
	if err != nil {
		sb.storeFailed(err)
		return 0, rec, err
	}
	if sb.degraded.Swap(false) {
		if sb.cfg.Logger != nil {
			sb.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "circuit breaker store available again",
				slog.String("name", sb.cb.Name()))
		}
	}
	return code, rec, nil
}

// storeFailed counts a failed round trip and marks the store unavailable, logging the
// first failure of an episode.
func (sb *SharedBreaker) storeFailed(err error) {
	sb.storeErrors.Add(1)
	if !sb.degraded.Swap(true) && sb.cfg.Logger != nil {
		sb.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "circuit breaker store unavailable, deciding locally",
			slog.String("name", sb.cb.Name()), slog.String("error", err.Error()))
	}
}

// poke wakes the goroutine so that it arms its retry timer.
func (sb *SharedBreaker) poke() {
	select {
	case sb.wake <- struct{}{}:
	default:
	}
}

var errBadReply = errors.New("leveeredis: unexpected reply from the breaker script")

func decodeReply(res []any) (int64, record, error) {
	if len(res) != 5 {
		return 0, record{}, errBadReply
	}
	var n [4]int64
	for i := range n {
		v, ok := res[i].(int64)
		if !ok {
			return 0, record{}, errBadReply
		}
		n[i] = v
	}
	origin, _ := res[4].(string)
	return n[0], record{version: n[1], state: circuitbreaker.State(n[2]),
		remaining: time.Duration(n[3]) * time.Microsecond, origin: origin}, nil
}

// parseMessage decodes "version state remaining origin".
func parseMessage(s string) (record, bool) {
	f := strings.SplitN(s, " ", 4)
	if len(f) != 4 {
		return record{}, false
	}
	v, err1 := strconv.ParseInt(f[0], 10, 64)
	st, err2 := strconv.ParseInt(f[1], 10, 32)
	rem, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return record{}, false
	}
	return record{version: v, state: circuitbreaker.State(st), remaining: time.Duration(rem) * time.Microsecond, origin: f[3]}, true
}
