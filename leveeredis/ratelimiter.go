package leveeredis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
)

// RateLimiter is a rate limiter whose permissions live in Redis, shared by every replica that
// creates one with the same name and key prefix against the same Redis: the fleet as a whole
// admits at most LimitForPeriod calls per cycle. Each check is one atomic Lua script reading
// Redis's clock (TIME), so replicas' clocks never matter. Its API follows the core
// ratelimiter.RateLimiter (Resilience4j's RateLimiter): AcquirePermission waits for reserved
// permissions, ReservePermission returns the wait, ExecuteRateLimiter guards a call.
//
// It is a levee.PermissionLimiter and a levee.RetryAdvisor (RetryAfter), so it goes where the
// core limiter's role is taken: levee.Patterns' Limiter, Pipeline.WithPermissionLimiter, the
// Limiter field of leveehttp's and leveegrpc's ServerConfig, and a paused stream.
//
// While Redis is slow or down (no answer within StoreTimeout, an error, or the store circuit
// breaker open) checks follow Config.FailureMode; see Metrics for the counts. It is safe for
// concurrent use; Close stops its heartbeat. Unlike the core limiter, a check costs a round
// trip and allocates (go-redis builds each command), so the zero-allocation goal of levee's
// hot path does not hold here.
type RateLimiter struct {
	name      string
	client    redis.Scripter
	script    *redis.Script
	keys      []string // state, limit, replicas, ids
	heartKeys []string // replicas, limit
	cfg       Config
	periodUs  int64
	refused   *ratelimiter.RequestNotPermittedError
	breaker   *circuitbreaker.CircuitBreaker
	local     *localShare // FallbackToLocal only
	closedErr *StoreError // FailClosed while the breaker is open
	stale     int64       // µs after which a heartbeat no longer counts; 0 without heartbeat
	keep      int64       // cycles Redis remembers a promise after it ended

	limit     atomic.Int64 // the last limit Redis reported
	replicas  atomic.Int64 // the last count of live replicas; 0 until known
	free      atomic.Int64 // Redis's instant (µs) one permission is free again
	checks    atomic.Uint64
	lostMu    sync.Mutex
	lost      []string     // ids of checks whose answers never arrived
	available atomic.Int64 // the last available permissions Redis reported
	timeout   atomic.Int64 // µs; 0 for no wait
	offset    atomic.Int64 // Redis's clock minus ours, µs
	offsetOK  atomic.Bool
	degraded  atomic.Bool
	waiting   atomic.Int64
	counts    counters

	shareMu sync.Mutex // orders changes of the local limiter's share
	stop    chan struct{}
	done    chan struct{}
	close   sync.Once
}

// NewRateLimiter returns the shared rate limiter name, using client (the caller's; levee never
// builds one, and never closes it). Replicas sharing a limit use the same name, KeyPrefix and
// Redis. It returns an error naming the first field of cfg out of range, and refuses a
// *redis.Client or *redis.ClusterClient whose Options().ContextTimeoutEnabled is false: go-redis
// then ignores the context's deadline and a frozen Redis would hold every check for its read
// timeout instead of StoreTimeout. Suggested client settings for a limiter: MaxRetries -1,
// ContextTimeoutEnabled true, DialTimeout, ReadTimeout and WriteTimeout of a few StoreTimeouts.
//
// With FailureMode FallbackToLocal and no FallbackLimitForPeriod it starts one goroutine, the
// heartbeat, which Close stops. It makes no call to Redis itself.
func NewRateLimiter(client redis.UniversalClient, name string, cfg Config) (*RateLimiter, error) {
	if client == nil {
		return nil, errors.New("leveeredis: client must not be nil")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = defaultReplicaID(&limiterSeq)
	}
	breaker, err := circuitbreaker.New(name, cfg.storeBreakerConfig())
	if err != nil {
		return nil, fmt.Errorf("leveeredis: StoreCircuitBreaker: %w", err)
	}
	base := cfg.KeyPrefix + "{" + name + "}"
	rl := &RateLimiter{
		name:      name,
		client:    client,
		script:    scriptCycles,
		keys:      []string{base, base + ":limit", base + ":replicas", base + ":ids", base + ":promises"},
		heartKeys: []string{base + ":replicas", base + ":limit", base + ":promises"},
		cfg:       cfg,
		periodUs:  cfg.LimitRefreshPeriod.Microseconds(),
		refused:   &ratelimiter.RequestNotPermittedError{Name: name},
		breaker:   breaker,
		closedErr: &StoreError{Name: name, Err: circuitbreaker.ErrCallNotPermitted},
	}
	if cfg.Algorithm == GCRA {
		rl.script = scriptGCRA
	}
	// A promise is remembered for as long as the fleet may still count its replica: ten
	// heartbeat intervals (a drop in the count is believed after that) and three more.
	rl.keep = max(2, (13*cfg.HeartbeatInterval.Microseconds()+rl.periodUs-1)/rl.periodUs)
	rl.limit.Store(int64(cfg.LimitForPeriod))
	rl.available.Store(int64(cfg.LimitForPeriod))
	rl.timeout.Store(timeoutMicros(cfg.TimeoutDuration))
	if cfg.FailureMode == FallbackToLocal {
		rl.local = &localShare{period: rl.periodUs, share: int64(rl.share()), degraded: &rl.degraded}
		if cfg.FallbackLimitForPeriod == 0 {
			rl.stale = 3 * cfg.HeartbeatInterval.Microseconds()
			rl.stop, rl.done = make(chan struct{}), make(chan struct{})
			go rl.heartbeat()
		}
	}
	return rl, nil
}

// checkClient refuses clients that would ignore the context's deadline.
func checkClient(client redis.UniversalClient) error {
	enabled := true
	switch c := client.(type) {
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	}
	if !enabled {
		return errors.New("leveeredis: the client's Options.ContextTimeoutEnabled must be true, " +
			"else a frozen Redis holds each round trip for the client's ReadTimeout instead of StoreTimeout")
	}
	return nil
}

func boolArg(b bool) int {
	if b {
		return 1
	}
	return 0
}

func timeoutMicros(d time.Duration) int64 {
	if d == ratelimiter.NoWait {
		return 0
	}
	return d.Microseconds()
}

// Warm loads the limiter's scripts into Redis's script cache, so that the first checks cost one
// round trip each rather than two (go-redis sends EVALSHA, then EVAL when Redis does not know
// the script), for example at start-up before traffic arrives. It makes one round trip per
// script (five), each bounded by StoreTimeout and ctx, and stops at the first that fails,
// returning its error: Redis's, or the timeout's when Redis did not answer within
// StoreTimeout (a frozen Redis; go-redis reports it as a net.Error whose Timeout is true,
// os.ErrDeadlineExceeded, or context.DeadlineExceeded when the deadline passed before the
// command was sent). The limiter works without it: a script Redis does not know is sent with
// the check that needs it.
func (rl *RateLimiter) Warm(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	for _, s := range []*redis.Script{rl.script, scriptGiveBack, scriptReclaim, scriptChangeLimit, scriptHeartbeat} {
		sctx, cancel := context.WithTimeout(ctx, rl.cfg.StoreTimeout)
		err := s.Load(sctx, rl.client).Err()
		cancel()
		if err != nil {
			return fmt.Errorf("leveeredis: load scripts of %q: %w", rl.name, err)
		}
	}
	return nil
}

// Name returns the limiter's name.
func (rl *RateLimiter) Name() string { return rl.name }

// StoreCircuitBreaker returns the circuit breaker guarding the calls to Redis, named after the
// limiter, for observation (registry, metrics) or to be forced open by an operator.
func (rl *RateLimiter) StoreCircuitBreaker() *circuitbreaker.CircuitBreaker { return rl.breaker }

// Close stops the heartbeat and removes this replica from the set of live replicas (one call
// to Redis bounded by StoreTimeout). The limiter keeps working; further calls to Close do
// nothing. The client is the caller's and stays open.
func (rl *RateLimiter) Close() error {
	var err error
	rl.close.Do(func() {
		if rl.stop == nil {
			return
		}
		close(rl.stop)
		<-rl.done
		ctx, cancel := context.WithTimeout(context.Background(), rl.cfg.StoreTimeout)
		defer cancel()
		if c, ok := rl.client.(redis.Cmdable); ok {
			err = c.ZRem(ctx, rl.heartKeys[0], rl.cfg.ReplicaID).Err()
		}
	})
	return err
}

// reservation is Redis's answer to one check.
type reservation struct {
	code      int64
	wait      time.Duration
	available int64
	seq       int64
}

const (
	codeRefused = 0
	codeGranted = 1
	codeInvalid = -1
	codeExpired = -2
)

// errExpired reports a check that reached Redis after its caller had given up.
var errExpired = errors.New("leveeredis: the check reached Redis after StoreTimeout")

// reserve runs one check on Redis through the store breaker. An error other than ctx's means
// the store is unavailable.
func (rl *RateLimiter) reserve(ctx context.Context, n int, timeoutUs int64) (reservation, error) {
	permit, err := rl.breaker.Acquire()
	if err != nil {
		return reservation{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, rl.cfg.StoreTimeout)
	defer cancel()
	// The script writes nothing when Redis runs it after this deadline, translated to Redis's
	// clock with the offset the answers showed, less StoreTimeout/2 for the answer's way back:
	// a check that timed out here, still queued in a stalled Redis, then takes no permission
	// nobody was told about. Until a first answer the offset is unknown and no deadline is sent.
	var deadline, debtCycle, debt, share int64
	if d, ok := sctx.Deadline(); ok && rl.offsetOK.Load() {
		deadline = d.UnixMicro() + rl.offset.Load() - rl.cfg.StoreTimeout.Microseconds()/2
	}
	promise := deadline > 0
	if rl.local != nil {
		// what the local share granted in the current cycle (Redis takes what it was not
		// told), and the promise not to grant locally in this cycle and the next
		debtCycle, debt, share, promise = rl.local.contact(rl.redisNow(), deadline, true)
	}
	id := rl.cfg.ReplicaID + "#" + strconv.FormatUint(rl.checks.Add(1), 36)
	sent := time.Now().UnixMicro()
	vals, err := rl.script.Run(sctx, rl.client, rl.keys,
		n, rl.periodUs, rl.cfg.LimitForPeriod, timeoutUs, deadline,
		id, rl.cfg.ReplicaID, rl.stale, debtCycle, debt, share,
		boolArg(promise), rl.replicas.Load(), rl.keep).Int64Slice()
	if err == nil && len(vals) != 8 {
		err = fmt.Errorf("leveeredis: unexpected answer from Redis: %v", vals)
	}
	if err != nil {
		rl.addLost(id)
		if ctx.Err() != nil {
			permit.Release() // the caller gave up: says nothing about Redis
			return reservation{}, ctx.Err()
		}
		permit.OnError(err)
		return reservation{}, err
	}
	rl.learnOffset(vals[5] - time.Now().UnixMicro())
	if rl.local != nil {
		// Redis ran the script after sent: its clock then was at most vals[5] - sent ahead
		// of ours, so the estimate lags it by at most that less the offset.
		rl.local.guard.Store(max(vals[5]-sent-rl.offset.Load(), 0))
	}
	rl.limit.Store(vals[3])
	// A check may only raise the count of replicas (a smaller share); the heartbeat sets it.
	if cur := rl.replicas.Load(); cur > 0 && vals[6] > cur && rl.replicas.CompareAndSwap(cur, vals[6]) {
		rl.updateShare()
	}
	if vals[0] == codeExpired {
		permit.OnError(errExpired)
		return reservation{}, errExpired
	}
	permit.OnSuccess()
	rl.available.Store(vals[2])
	rl.free.Store(vals[7])
	rl.reclaim()
	return reservation{code: vals[0], wait: time.Duration(vals[1]) * time.Microsecond, available: vals[2], seq: vals[4]}, nil
}

// maxLost bounds the ids of unanswered checks kept for reclaim; older ones are forgotten
// (their permissions, if Redis counted them, stay spent).
const maxLost = 64

func (rl *RateLimiter) addLost(id string) {
	rl.lostMu.Lock()
	defer rl.lostMu.Unlock()
	if len(rl.lost) == maxLost {
		copy(rl.lost, rl.lost[1:])
		rl.lost = rl.lost[:maxLost-1]
	}
	rl.lost = append(rl.lost, id)
}

// reclaim gives back, once Redis answers again, the permissions Redis counted for checks
// whose answers never arrived, when they belong to the current cycle (one script, bounded by
// StoreTimeout; after a failure the ids wait for the next answer, and the script forgets those
// of past cycles).
func (rl *RateLimiter) reclaim() {
	rl.lostMu.Lock()
	if len(rl.lost) == 0 {
		rl.lostMu.Unlock()
		return
	}
	ids := rl.lost
	rl.lost = nil
	rl.lostMu.Unlock()
	alg := 0
	if rl.cfg.Algorithm == GCRA {
		alg = 1
	}
	args := make([]any, 0, 3+len(ids))
	args = append(args, rl.periodUs, rl.cfg.LimitForPeriod, alg)
	for _, id := range ids {
		args = append(args, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rl.cfg.StoreTimeout)
	defer cancel()
	back, err := scriptReclaim.Run(ctx, rl.client, rl.keys, args...).Int64()
	if err != nil {
		// Kept for the next answer: the script gives an id back once, so a reclaim that ran in
		// Redis but whose answer was lost gives nothing back when run again.
		rl.requeueLost(ids)
		return
	}
	if back > 0 {
		rl.counts.reclaimed.Add(uint64(back))
	}
}

// requeueLost puts back ids a failed reclaim took, before those lost since, keeping the newest
// maxLost.
func (rl *RateLimiter) requeueLost(ids []string) {
	rl.lostMu.Lock()
	defer rl.lostMu.Unlock()
	all := append(ids, rl.lost...)
	if len(all) > maxLost {
		all = all[len(all)-maxLost:]
	}
	rl.lost = all
}

// redisNow estimates Redis's clock now, in µs since the Unix epoch.
func (rl *RateLimiter) redisNow() int64 {
	return time.Now().UnixMicro() + rl.offset.Load()
}

// learnOffset updates the estimate of Redis's clock minus ours with a new sample. A sample is
// the true offset less the answer's way back, so the largest recent sample is the best: a
// larger one is taken at once, a smaller one (a slow way back, or a clock step back) moves the
// estimate by 1/16 of the gap.
func (rl *RateLimiter) learnOffset(sample int64) {
	if !rl.offsetOK.Load() {
		rl.offset.Store(sample)
		rl.offsetOK.Store(true)
		return
	}
	for {
		old := rl.offset.Load()
		next := sample
		if sample < old {
			next = old - (old-sample+15)/16
		}
		if next == old || rl.offset.CompareAndSwap(old, next) {
			return
		}
	}
}

// timeoutFor returns the longest wait, in µs, a request may be given: TimeoutDuration, ended
// before ctx's deadline; 0 for a request that may not wait.
func (rl *RateLimiter) timeoutFor(ctx context.Context) int64 {
	timeout := rl.timeout.Load()
	if timeout > 0 && ctx != nil {
		if deadline, ok := ctx.Deadline(); ok {
			timeout = max(min(timeout, time.Until(deadline).Microseconds()-1), 0)
		}
	}
	return timeout
}

func (rl *RateLimiter) invalid(n int, limit int64) error {
	return fmt.Errorf("%w: asked for %d, must be in [1, %d] (LimitForPeriod)", ratelimiter.ErrInvalidPermits, n, limit)
}

// AcquirePermission obtains n permissions of the shared limit, as the core
// ratelimiter.RateLimiter.AcquirePermission (Resilience4j's acquirePermission(n)): nil when
// they were free or when a reservation of a later cycle came due within TimeoutDuration and
// ctx's deadline; the limiter's *ratelimiter.RequestNotPermittedError (errors.Is
// ratelimiter.ErrRequestNotPermitted) at once otherwise. A waiter whose ctx ends gets ctx.Err()
// and gives its reservation back when no later grant followed it. n must be in [1, the shared
// LimitForPeriod], else the error matches ratelimiter.ErrInvalidPermits.
//
// When Redis is unavailable the FailureMode decides: the local share's answer
// (FallbackToLocal), nil (FailOpen), or a *StoreError (FailClosed). A nil ctx is Background.
func (rl *RateLimiter) AcquirePermission(ctx context.Context, n int) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n < 1 {
		return rl.invalid(n, rl.limit.Load())
	}
	r, err := rl.reserve(ctx, n, rl.timeoutFor(ctx))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return rl.unavailable(ctx, n, err)
	}
	rl.recovered()
	switch r.code {
	case codeInvalid:
		return rl.invalid(n, rl.limit.Load())
	case codeRefused:
		rl.counts.refused.Add(1)
		return rl.refused
	}
	rl.counts.permitted.Add(1)
	if r.wait <= 0 {
		return nil
	}
	return rl.await(ctx, n, r)
}

// await waits for a reservation to come due, or gives it back when ctx ends first.
func (rl *RateLimiter) await(ctx context.Context, n int, r reservation) error {
	rl.waiting.Add(1)
	defer rl.waiting.Add(-1)
	timer := time.NewTimer(r.wait)
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		timer.Stop()
		rl.giveBack(n, r.seq)
		return ctx.Err()
	}
}

// giveBack returns a reservation's permissions when no grant followed it (one script, bounded
// by StoreTimeout; a failure leaves them reserved).
func (rl *RateLimiter) giveBack(n int, seq int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), rl.cfg.StoreTimeout)
	defer cancel()
	alg := 0
	if rl.cfg.Algorithm == GCRA {
		alg = 1
	}
	back, err := scriptGiveBack.Run(ctx, rl.client, rl.keys, n, seq, rl.periodUs, rl.cfg.LimitForPeriod, alg).Int64()
	if err == nil && back == 1 {
		rl.counts.givenBack.Add(1)
		return true
	}
	return false
}

// ReservePermission takes or reserves n permissions without waiting, as the core
// ratelimiter.RateLimiter.ReservePermission (Resilience4j's reservePermission(n)): 0 when they
// are free now, the positive wait before using them when they were reserved in a later cycle,
// or the refusal together with the wait the request would have needed (µs precision, on
// Redis's clock or the local share's; the core limiter returns 0 there), for Retry-After. A
// failed check outside an episode returns a *StoreError and 0. ctx bounds the round trip only. While Redis is unavailable the FailureMode
// decides, as in AcquirePermission.
func (rl *RateLimiter) ReservePermission(ctx context.Context, n int) (time.Duration, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, rl.invalid(n, rl.limit.Load())
	}
	r, err := rl.reserve(ctx, n, rl.timeout.Load())
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return rl.unavailableReserve(n, err)
	}
	rl.recovered()
	switch r.code {
	case codeInvalid:
		return 0, rl.invalid(n, rl.limit.Load())
	case codeRefused:
		rl.counts.refused.Add(1)
		return r.wait, rl.refused
	}
	rl.counts.permitted.Add(1)
	return r.wait, nil
}

// ChangeLimitForPeriod sets the shared limit to n for every replica from the next cycle on, as
// Resilience4j's changeLimitForPeriod: the current cycle keeps its permissions and those
// already reserved count against n. The limit is stored in Redis (without expiry) and
// overrides every replica's LimitForPeriod; each replica learns it with its next check or
// heartbeat. It returns an error naming LimitForPeriod when n is out of [1,
// MaxLimitForPeriod], or Redis's error (then
// nothing changed, or the change is applied without this replica knowing).
func (rl *RateLimiter) ChangeLimitForPeriod(ctx context.Context, n int) error {
	if n < 1 || n > MaxLimitForPeriod {
		return fmt.Errorf("leveeredis: LimitForPeriod must be in [1, %d], got %d", MaxLimitForPeriod, n)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	sctx, cancel := context.WithTimeout(ctx, rl.cfg.StoreTimeout)
	defer cancel()
	if err := scriptChangeLimit.Run(sctx, rl.client, rl.keys, n, rl.periodUs, rl.cfg.LimitForPeriod).Err(); err != nil {
		return fmt.Errorf("leveeredis: change limit of %q: %w", rl.name, err)
	}
	rl.limit.Store(int64(n))
	rl.updateShare()
	return nil
}

// ChangeTimeoutDuration sets TimeoutDuration of this replica for the requests that start from
// now on; d may be 0 or ratelimiter.NoWait, both meaning no wait, and must not be otherwise
// negative. Resilience4j's changeTimeoutDuration.
func (rl *RateLimiter) ChangeTimeoutDuration(d time.Duration) error {
	if d < 0 && d != ratelimiter.NoWait {
		return fmt.Errorf("leveeredis: TimeoutDuration must be >= 0 or ratelimiter.NoWait, got %v", d)
	}
	rl.timeout.Store(timeoutMicros(d))
	return nil
}

// StoreError is the refusal of FailClosed: Redis could not be asked (Err: its error, or
// circuitbreaker.ErrCallNotPermitted while the store breaker is open). It matches
// ratelimiter.ErrRequestNotPermitted with errors.Is and is a levee rejection
// (levee.IsRejection), as Bucket4j rethrows the store's exception.
type StoreError struct {
	// Name is the limiter's name.
	Name string
	// Err is why Redis could not be asked.
	Err error
}

// Error returns "leveeredis: RateLimiter '<name>' store unavailable: <err>".
func (e *StoreError) Error() string {
	var b strings.Builder
	b.WriteString("leveeredis: RateLimiter '")
	b.WriteString(e.Name)
	b.WriteString("' store unavailable: ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *StoreError) Unwrap() error { return e.Err }

// Is reports whether target is ratelimiter.ErrRequestNotPermitted.
func (e *StoreError) Is(target error) bool { return target == ratelimiter.ErrRequestNotPermitted }

// LeveeRejection marks the error as a refusal by levee, before the call ran.
func (e *StoreError) LeveeRejection() bool { return true }
