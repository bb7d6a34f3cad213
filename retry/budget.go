package retry

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of BudgetConfig, as Finagle's RetryBudget: 20% more load at most, 10 retries a second
// whatever the traffic, over 10 seconds.
const (
	DefaultBudgetRatio               = 0.2
	DefaultBudgetMinRetriesPerSecond = 10
	DefaultBudgetWindow              = 10 * time.Second
)

// Explicit "none" values of BudgetConfig, whose zero values mean the defaults.
const (
	// NoBudgetRatio is the Ratio of a budget whose calls earn no retry: only the
	// MinRetriesPerSecond reserve is spent.
	// Its value is the most negative float64, which no typo or guess such as −1 reaches:
	// every other negative Ratio is refused.
	NoBudgetRatio float64 = -math.MaxFloat64
	// NoBudgetMinimum is the MinRetriesPerSecond of a budget with no reserve: retries are
	// earned by calls alone.
	// Its value is the smallest int (math.MinInt), which no typo or guess such as −1
	// reaches: every other negative MinRetriesPerSecond is refused.
	NoBudgetMinimum = math.MinInt
)

// budgetSlots is the number of slots the window is divided into: a call's deposit, and a
// retry's withdrawal, count for the slot it falls in and leave the window with that slot.
const budgetSlots = 10

// budgetUnit is one retry, in the budget's fixed-point units: a Ratio is kept to a thousandth.
const budgetUnit = 1000

// BudgetConfig configures a Budget. The zero value of every field means its default
// (Finagle's RetryBudget defaults).
type BudgetConfig struct {
	// Ratio is the retries each call earns: 0.1 lets retries add at most 10% to the calls made
	// over Window. It is kept to a thousandth, rounded down, and must be in [0.001, 1000]; 0 means
	// DefaultBudgetRatio (0.2) and NoBudgetRatio none (only the reserve).
	Ratio float64

	// MinRetriesPerSecond is the reserve that lets a dependency with little traffic still be
	// retried: MinRetriesPerSecond × Window (in whole seconds, rounded down) retries per
	// window, earned or not. Must be in [1, 1000000]; 0 means DefaultBudgetMinRetriesPerSecond
	// (10) and NoBudgetMinimum none. Ratio and MinRetriesPerSecond may not both be none.
	MinRetriesPerSecond int

	// Window is how long a call's deposit and a retry's withdrawal count: a sliding window in
	// 10 slots of Window/10, so a deposit leaves the budget between 0.9 × Window and Window
	// after it was made. Must be in [1s, 1h]; 0 means DefaultBudgetWindow (10s).
	Window time.Duration
}

// Budget bounds the retries of every call to one dependency, as Finagle's RetryBudget and
// gRPC's retry throttling: each call deposits Ratio of a retry, each retry withdraws one, over
// a sliding Window, with a reserve of MinRetriesPerSecond × Window seconds. A retry is allowed
// while the balance (reserve + Ratio × calls − retries, all within the window) holds a whole
// retry; otherwise the call stops with a *MaxRetriesExceededError whose Reason is
// ErrBudgetExhausted. Over any window, retries ≤ Ratio × calls + reserve, so a dead dependency
// sees at most (1 + Ratio) × calls + reserve attempts instead of MaxAttempts × calls.
//
// Set it in Config.Budget; several Retry instances may share one, and then share its retries.
// A call deposits when it starts (Execute, or Retry.NewContext for operators driving a
// Context), once however many attempts it makes. Depositing is lock-free and allocates nothing:
// two atomic additions (a mutex is taken once per slot when the window slides). Withdrawing, a
// retry's cost, takes a mutex so that concurrent retries never overdraw the budget.
//
// A Budget is safe for concurrent use. Methods on a nil *Budget do nothing and report zeros.
type Budget struct {
	config  BudgetConfig // defaults filled in
	origin  time.Time
	slot    time.Duration
	deposit int64 // units a call deposits
	reserve int64 // units always available per window

	mu    sync.Mutex // withdrawals and slot resets
	slots [budgetSlots]budgetSlot

	deposits    atomic.Int64
	withdrawals atomic.Int64
	refused     atomic.Int64
}

type budgetSlot struct {
	epoch       atomic.Int64 // slot number + 1 since origin; 0: never used
	deposits    atomic.Int64
	withdrawals atomic.Int64
}

// NewBudget validates cfg and returns a Budget. An invalid field is refused with an error
// naming it and its allowed range, e.g. "retry: Ratio must be in [0.001, 1000] (or
// NoBudgetRatio for none), got 0.0001".
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	switch {
	case cfg.Ratio == 0:
		cfg.Ratio = DefaultBudgetRatio
	case cfg.Ratio == NoBudgetRatio:
	case !(cfg.Ratio >= 0.001 && cfg.Ratio <= 1000):
		return nil, fmt.Errorf("retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got %v", cfg.Ratio)
	}
	switch {
	case cfg.MinRetriesPerSecond == 0:
		cfg.MinRetriesPerSecond = DefaultBudgetMinRetriesPerSecond
	case cfg.MinRetriesPerSecond == NoBudgetMinimum:
	case cfg.MinRetriesPerSecond < 1 || cfg.MinRetriesPerSecond > 1_000_000:
		return nil, fmt.Errorf("retry: MinRetriesPerSecond must be in [1, 1000000] (or NoBudgetMinimum for none), got %d",
			cfg.MinRetriesPerSecond)
	}
	switch {
	case cfg.Window == 0:
		cfg.Window = DefaultBudgetWindow
	case cfg.Window < time.Second || cfg.Window > time.Hour:
		return nil, fmt.Errorf("retry: Window must be in [1s, 1h], got %v", cfg.Window)
	}
	if cfg.Ratio == NoBudgetRatio && cfg.MinRetriesPerSecond == NoBudgetMinimum {
		return nil, errors.New("retry: set Ratio or MinRetriesPerSecond, not neither: such a budget allows no retry")
	}
	b := &Budget{config: cfg, origin: time.Now(), slot: cfg.Window / budgetSlots}
	if cfg.Ratio != NoBudgetRatio {
		// Rounded down to a thousandth (the 1e-6 absorbs float error: 1.001 × 1000 is 1000.99…),
		// so retries never exceed Ratio × calls + reserve.
		b.deposit = int64(math.Floor(cfg.Ratio*budgetUnit + 1e-6))
	}
	if cfg.MinRetriesPerSecond != NoBudgetMinimum {
		b.reserve = int64(cfg.MinRetriesPerSecond) * int64(cfg.Window/time.Second) * budgetUnit
	}
	return b, nil
}

// Config returns the config in force, with defaults filled in; NewBudget accepts it.
func (b *Budget) Config() BudgetConfig {
	if b == nil {
		return BudgetConfig{}
	}
	return b.config
}

// BudgetMetrics is a snapshot of a Budget's counters.
type BudgetMetrics struct {
	// AvailableRetries is the number of retries the budget would allow now: whole retries of
	// its balance, never negative.
	AvailableRetries int64
	// NumberOfDeposits counts the calls that deposited, since NewBudget.
	NumberOfDeposits int64
	// NumberOfWithdrawals counts the retries the budget allowed, since NewBudget.
	NumberOfWithdrawals int64
	// NumberOfRefusedRetries counts the retries the budget refused (calls it stopped), since
	// NewBudget.
	NumberOfRefusedRetries int64
}

// Metrics returns a snapshot of the counters. They are read one by one, so a snapshot taken
// while calls run may be mid-update across fields.
func (b *Budget) Metrics() BudgetMetrics {
	if b == nil {
		return BudgetMetrics{}
	}
	n := b.now()
	b.mu.Lock()
	available := b.balanceLocked(n) / budgetUnit
	b.mu.Unlock()
	return BudgetMetrics{
		AvailableRetries:       max(available, 0),
		NumberOfDeposits:       b.deposits.Load(),
		NumberOfWithdrawals:    b.withdrawals.Load(),
		NumberOfRefusedRetries: b.refused.Load(),
	}
}

// now returns the number of the current slot since origin (0 if the clock reads earlier).
func (b *Budget) now() int64 {
	d := time.Since(b.origin)
	if d < 0 {
		return 0
	}
	return int64(d / b.slot)
}

// depositCall records a call. It is the hot path: two atomic additions in the common case.
func (b *Budget) depositCall() {
	b.deposits.Add(1)
	if b.deposit == 0 {
		return
	}
	n := b.now()
	s := &b.slots[n%budgetSlots]
	if s.epoch.Load() != n+1 {
		b.mu.Lock()
		ok := b.rotateLocked(s, n)
		b.mu.Unlock()
		if !ok {
			return
		}
	}
	s.deposits.Add(1)
}

// withdrawRetry takes one retry from the budget, or reports false when it holds less than one.
func (b *Budget) withdrawRetry() bool {
	n := b.now()
	b.mu.Lock()
	s := &b.slots[n%budgetSlots]
	if !b.rotateLocked(s, n) || b.balanceLocked(n) < budgetUnit {
		b.mu.Unlock()
		b.refused.Add(1)
		return false
	}
	s.withdrawals.Add(1)
	b.mu.Unlock()
	b.withdrawals.Add(1)
	return true
}

// rotateLocked makes s the slot of number n, emptying it when it held an older one, and reports
// whether s is slot n (false when a newer slot already took its place: the caller is late).
// Counters are reset before the epoch is published, so a depositor that sees the new epoch
// adds to empty counters.
func (b *Budget) rotateLocked(s *budgetSlot, n int64) bool {
	switch e := s.epoch.Load(); {
	case e == n+1:
		return true
	case e > n+1:
		return false
	}
	s.deposits.Store(0)
	s.withdrawals.Store(0)
	s.epoch.Store(n + 1)
	return true
}

// balanceLocked returns the units available in the window ending with slot n.
func (b *Budget) balanceLocked(n int64) int64 {
	balance := b.reserve
	for i := range b.slots {
		s := &b.slots[i]
		if e := s.epoch.Load() - 1; e > n-budgetSlots && e <= n {
			balance += s.deposits.Load()*b.deposit - s.withdrawals.Load()*budgetUnit
		}
	}
	return balance
}
