package adaptive

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/safe"
)

// Partition is one class of calls of a PartitionedLimiter (a tenant, a route, live or batch
// traffic) and the share of the limit it is guaranteed.
type Partition struct {
	// Name identifies the partition in WithPartition and in metrics; unique and not empty.
	Name string
	// Share is the fraction of the limit the partition is guaranteed, in (0, 1]; the shares
	// of all partitions sum to at most 1. The partition's own limit is max(1, ⌈limit × Share⌉).
	Share float64
	// RejectionDelay, when > 0, makes a refused caller of this partition wait that long before
	// it gets its rejection (Netflix's backoff), at most; its context can end the wait sooner.
	// It slows a client that would retry at once. Default 0: no delay.
	RejectionDelay time.Duration
}

// PartitionedConfig configures a PartitionedLimiter: the limit's algorithm and bounds, and
// the partitions.
type PartitionedConfig struct {
	// Config configures the limit the partitions share, as for New. MaxQueued and
	// MaxWaitDuration must be zero: a partitioned limiter queues nobody.
	Config
	// Partitions lists the partitions and their shares, summing to at most 1. Calls of no
	// partition or of an unknown one belong to an implicit partition, named "", whose share is
	// what the others leave (possibly 0: then it only borrows idle capacity).
	Partitions []Partition
	// MaxDelayedCalls bounds the callers waiting out a RejectionDelay at once, >= 0; a refused
	// caller beyond it is refused at once. Default 100 (Netflix's maxDelayedThreads).
	MaxDelayedCalls int
}

// DefaultMaxDelayedCalls is PartitionedConfig.MaxDelayedCalls's default.
const DefaultMaxDelayedCalls = 100

// PartitionedLimiter is an adaptive limit divided into partitions, as Netflix's
// AbstractPartitionedLimiter: each partition is guaranteed its share of the limit, and may
// borrow the capacity the others leave idle. A caller is refused only when the whole limit is
// in use and its partition uses its share or more:
//
//	refuse  ⇔  inFlight ≥ limit  and  partition.inFlight ≥ max(1, ⌈limit × share⌉)
//
// So a partition below its share is always admitted, even past the limit, and a borrower gets
// no more once the owners are back: as the borrowed calls end, the capacity returns to the
// partitions that own it. A partition past its share is admitted only while the limit has
// room: while any other partition waits for its share, a noisy one cannot grow beyond its
// own. The limit itself moves as a Limiter's, by the algorithm of Config.Algorithm fed by
// every partition's calls. Netflix's example: live 0.9, batch 0.1.
//
// It is safe for concurrent use. Create it with NewPartitioned.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilLimiter, a zero answer or a no-op),
// never with a panic.
type PartitionedLimiter struct {
	name     string
	cfg      PartitionedConfig
	fullErr  *LimitExceededError
	byName   map[string]int // index in parts; the implicit partition is last
	maxDelay int

	// released tells NotifyRelease's watchers that a permit came free.
	released event.Publisher[struct{}]

	mu       sync.Mutex
	alg      LimitAlgorithm
	limit    int
	inFlight int
	round    uint64
	delayed  int
	parts    []partitionState

	// A limiter of NewKeyed has a partition per key with calls in flight, created on its
	// first call and forgotten with its last: keys maps them to parts, free lists the
	// indexes of parts to reuse.
	keyed            bool
	maxKeys          int
	keys             map[string]int
	free             []int
	keysRefused      uint64
	delayKeyed       time.Duration
	keysRefusedShare uint64
}

type partitionState struct {
	Partition
	limit               int
	inFlight            int
	delayed             int
	permitted, rejected uint64
}

// NewPartitioned returns a partitioned limiter named name, or an error naming the field and
// its allowed range: the fields of Config as New checks them, and
//
//	adaptive: Partitions[1].Share must be in (0, 1], got 1.5
//	adaptive: Partitions' shares must sum to at most 1, got 1.2
func NewPartitioned(name string, cfg PartitionedConfig) (*PartitionedLimiter, error) {
	// Checked before the defaults, which would fill MaxWaitDuration: a partitioned limiter
	// queues nobody, so a wait set here could only be ignored.
	if cfg.MaxWaitDuration != 0 {
		return nil, fmt.Errorf("adaptive: MaxWaitDuration must be 0 for a PartitionedLimiter, got %v", cfg.MaxWaitDuration)
	}
	cfg.Config = cfg.Config.withDefaults()
	if err := cfg.Config.validate(); err != nil {
		return nil, err
	}
	if cfg.MaxQueued != 0 {
		return nil, fmt.Errorf("adaptive: MaxQueued must be 0 for a PartitionedLimiter, got %d", cfg.MaxQueued)
	}
	cfg.MaxWaitDuration = 0 // so that Config returns a configuration NewPartitioned accepts
	switch {
	case cfg.MaxDelayedCalls < 0:
		return nil, fmt.Errorf("adaptive: MaxDelayedCalls must be >= 0, got %d", cfg.MaxDelayedCalls)
	case cfg.MaxDelayedCalls == 0:
		cfg.MaxDelayedCalls = DefaultMaxDelayedCalls
	}
	l := &PartitionedLimiter{
		name:    name,
		fullErr: &LimitExceededError{Name: name},
		byName:  make(map[string]int, len(cfg.Partitions)),
		alg:     newAlgorithm(cfg.Config),
		limit:   cfg.InitialLimit,
	}
	sum := 0.0
	for i, p := range cfg.Partitions {
		switch _, dup := l.byName[p.Name]; {
		case p.Name == "":
			return nil, fmt.Errorf("adaptive: Partitions[%d].Name must not be empty", i)
		case dup:
			return nil, fmt.Errorf("adaptive: Partitions[%d].Name %q is used twice", i, p.Name)
		case !(p.Share > 0 && p.Share <= 1):
			return nil, fmt.Errorf("adaptive: Partitions[%d].Share must be in (0, 1], got %v", i, p.Share)
		case p.RejectionDelay < 0:
			return nil, fmt.Errorf("adaptive: Partitions[%d].RejectionDelay must be >= 0, got %v", i, p.RejectionDelay)
		}
		l.byName[p.Name] = i
		sum += p.Share
	}
	// A little slack for shares such as 0.7 + 0.2 + 0.1, whose float sum exceeds 1.
	if sum > 1+1e-9 {
		return nil, fmt.Errorf("adaptive: Partitions' shares must sum to at most 1, got %v", sum)
	}
	cfg.Partitions = append([]Partition(nil), cfg.Partitions...)
	l.cfg = cfg
	l.parts = make([]partitionState, 0, len(cfg.Partitions)+1)
	for _, p := range cfg.Partitions {
		l.parts = append(l.parts, partitionState{Partition: p})
	}
	l.parts = append(l.parts, partitionState{Partition: Partition{Share: max(0, 1-sum)}})
	l.sharesLocked()
	return l, nil
}

// sharesLocked recomputes each partition's limit from the total.
func (l *PartitionedLimiter) sharesLocked() {
	if l.keyed {
		return // a key's share is computed at each call
	}
	for i := range l.parts {
		p := &l.parts[i]
		if p.Share == 0 {
			p.limit = 0
			continue
		}
		// Rounded to 1e-9 first, so that 10 × 0.7 is 7, not 8.
		p.limit = max(1, int(math.Ceil(math.Round(float64(l.limit)*p.Share*1e9)/1e9)))
	}
}

// Name returns the name given to NewPartitioned, or "" for a nil l.
func (l *PartitionedLimiter) Name() string {
	if l.unset() {
		return ""
	}
	return l.name
}

// Config returns the configuration given to NewPartitioned with its defaults filled in.
func (l *PartitionedLimiter) Config() PartitionedConfig {
	if l.unset() {
		return PartitionedConfig{}
	}
	return l.cfg
}

type partitionKey struct{}

// WithPartition returns a copy of ctx that names the partition of the calls made with it, as
// Netflix's partition resolver reads it from the request. PartitionedLimiter.Acquire,
// ExecutePartitioned and PartitionedDecorator read it; middleware sets it from a header.
func WithPartition(ctx context.Context, partition string) context.Context {
	return context.WithValue(safe.Ctx(ctx), partitionKey{}, partition)
}

// PartitionFrom returns the partition WithPartition put in ctx, or "".
func PartitionFrom(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	s, _ := ctx.Value(partitionKey{}).(string)
	return s
}

// Acquire takes a permit for one call of the partition named in ctx (WithPartition; none or
// an unknown name is the implicit partition) under the rule of PartitionedLimiter. When
// refused it waits out the partition's RejectionDelay, if any, and returns l's
// *LimitExceededError (matching ErrLimitExceeded, the same value for every rejection by l).
// When ctx has ended it returns ctx's error. End the permit as a Limiter's. A nil l returns
// ErrNilLimiter. Neither an admission nor an immediate refusal allocates.
func (l *PartitionedLimiter) Acquire(ctx context.Context) (Permit, error) {
	if l.unset() {
		return Permit{}, ErrNilLimiter
	}
	ctx = safe.Ctx(ctx)
	return l.AcquirePartition(ctx, PartitionFrom(ctx))
}

// AcquirePartition is Acquire for the partition named partition, whatever ctx names.
func (l *PartitionedLimiter) AcquirePartition(ctx context.Context, partition string) (Permit, error) {
	if l.unset() {
		return Permit{}, ErrNilLimiter
	}
	ctx = safe.Ctx(ctx)
	if l.keyed {
		return l.acquireKey(ctx, partition)
	}
	i, ok := l.byName[partition]
	if !ok {
		i = len(l.parts) - 1
	}
	l.mu.Lock()
	p := &l.parts[i]
	if err := ctx.Err(); err != nil {
		p.rejected++
		l.mu.Unlock()
		return Permit{}, err
	}
	if l.inFlight < l.limit || p.inFlight < p.limit {
		l.inFlight++
		p.inFlight++
		p.permitted++
		permit := Permit{pl: l, part: i, started: time.Now(), round: l.round, inFlight: l.inFlight}
		l.mu.Unlock()
		return permit, nil
	}
	p.rejected++
	return l.refuseLocked(ctx, p.RejectionDelay, i)
}

// refuseLocked unlocks l.mu, waits out delay if the bound on delayed callers allows, and
// returns the rejection.
// part is the index of the caller's partition in l.parts, counted in its Delayed, or -1 (a
// key of NewKeyed, whose partitions are not listed).
func (l *PartitionedLimiter) refuseLocked(ctx context.Context, d time.Duration, part int) (Permit, error) {
	delay := d > 0 && l.delayed < l.cfg.MaxDelayedCalls
	if delay {
		l.delayed++
		if part >= 0 {
			l.parts[part].delayed++
		}
	}
	l.mu.Unlock()
	if delay {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		l.mu.Lock()
		l.delayed--
		if part >= 0 {
			l.parts[part].delayed--
		}
		l.mu.Unlock()
	}
	return Permit{}, l.fullErr
}

// end ends a permit of l.
func (l *PartitionedLimiter) end(pm Permit, kind sampleKind) {
	l.endLocked(pm, kind)
	if l.released.Active() {
		l.released.Publish(struct{}{})
	}
}

func (l *PartitionedLimiter) endLocked(pm Permit, kind sampleKind) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &l.parts[pm.part]
	if p.inFlight == 0 || l.inFlight == 0 {
		return
	}
	p.inFlight--
	l.inFlight--
	if l.keyed && p.inFlight == 0 {
		l.forgetKeyLocked(pm.part)
	}
	if kind == sampleIgnore {
		return
	}
	now := time.Now()
	s := Sample{At: now, RTT: now.Sub(pm.started), InFlight: pm.inFlight, Dropped: kind == sampleDropped}
	if pm.round != l.round {
		if o, ok := l.alg.(staleObserver); ok {
			o.observeStale(s)
		}
		return
	}
	if n := int(l.alg.OnSample(s)); n != l.limit {
		l.limit = n
		l.round++
		l.sharesLocked()
	}
}

// PartitionMetrics is a snapshot of one partition.
type PartitionMetrics struct {
	// Name is the partition's name, "" for the implicit one.
	Name string
	// Share is its guaranteed share, Limit that share of the current limit in calls.
	Share float64
	Limit int
	// InFlight is its calls holding a permit, possibly more than Limit while borrowing.
	InFlight int
	// Permitted and Rejected count its admissions and refusals since NewPartitioned.
	Permitted, Rejected uint64
	// Delayed is the number of its refused callers waiting out its RejectionDelay now, the
	// partition's queue: a partitioned limiter queues no caller for a permit.
	Delayed int
}

// PartitionedMetrics is a snapshot of a partitioned limiter.
type PartitionedMetrics struct {
	// Limit is the total limit, InFlight the calls of all partitions holding a permit.
	Limit, InFlight int
	// Delayed is the number of refused callers waiting out a RejectionDelay now, of every
	// partition (or key).
	Delayed int
	// Partitions are the partitions in the order of the config, the implicit one last. For a
	// limiter of NewKeyed they are the keys with calls in flight and unused slots: read
	// KeyedMetrics instead (see IsKeyed).
	Partitions []PartitionMetrics
}

// IsKeyed reports whether l was made by NewKeyed (a partition per key) rather than
// NewPartitioned; false for a nil l.
func (l *PartitionedLimiter) IsKeyed() bool { return l != nil && l.keyed }

// Metrics returns a snapshot of l (it allocates the Partitions slice), or the zero value for
// a nil l.
func (l *PartitionedLimiter) Metrics() PartitionedMetrics {
	if l.unset() {
		return PartitionedMetrics{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := PartitionedMetrics{Limit: l.limit, InFlight: l.inFlight, Delayed: l.delayed, Partitions: make([]PartitionMetrics, len(l.parts))}
	for i, p := range l.parts {
		m.Partitions[i] = PartitionMetrics{
			Name: p.Name, Share: p.Share, Limit: p.limit, InFlight: p.inFlight,
			Permitted: p.permitted, Rejected: p.rejected, Delayed: p.delayed,
		}
	}
	return m
}

// unset reports whether l is nil or a zero PartitionedLimiter that New never built: every exported
// method answers both as it answers nil.
func (l *PartitionedLimiter) unset() bool { return l == nil || l.fullErr == nil }
