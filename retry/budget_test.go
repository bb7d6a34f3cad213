package retry_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/retry"
)

func newBudget(t testing.TB, cfg retry.BudgetConfig) *retry.Budget {
	t.Helper()
	b, err := retry.NewBudget(cfg)
	require.NoError(t, err)
	return b
}

func TestNewBudgetRefusesInvalidConfig(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		field string
		cfg   retry.BudgetConfig
		want  string
	}{
		{"Ratio negative", retry.BudgetConfig{Ratio: -0.5},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got -0.5"},
		{"Ratio below a thousandth", retry.BudgetConfig{Ratio: 0.0009},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got 0.0009"},
		{"Ratio above 1000", retry.BudgetConfig{Ratio: 1000.5},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got 1000.5"},
		{"Ratio NaN", retry.BudgetConfig{Ratio: nan},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got NaN"},
		{"Ratio +Inf", retry.BudgetConfig{Ratio: inf},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got +Inf"},
		{"MinRetriesPerSecond negative", retry.BudgetConfig{MinRetriesPerSecond: -2},
			"retry: MinRetriesPerSecond must be in [1, 1000000] (or NoBudgetMinimum for none), got -2"},
		{"MinRetriesPerSecond -1 is not NoBudgetMinimum", retry.BudgetConfig{MinRetriesPerSecond: -1},
			"retry: MinRetriesPerSecond must be in [1, 1000000] (or NoBudgetMinimum for none), got -1"},
		{"Ratio -1 is not NoBudgetRatio", retry.BudgetConfig{Ratio: -1},
			"retry: Ratio must be in [0.001, 1000] (or NoBudgetRatio for none), got -1"},
		{"MinRetriesPerSecond too large", retry.BudgetConfig{MinRetriesPerSecond: 1_000_001},
			"retry: MinRetriesPerSecond must be in [1, 1000000] (or NoBudgetMinimum for none), got 1000001"},
		{"Window negative", retry.BudgetConfig{Window: -time.Second},
			"retry: Window must be in [1s, 1h], got -1s"},
		{"Window below 1s", retry.BudgetConfig{Window: time.Second - 1},
			"retry: Window must be in [1s, 1h], got 999.999999ms"},
		{"Window above 1h", retry.BudgetConfig{Window: time.Hour + 1},
			"retry: Window must be in [1s, 1h], got 1h0m0.000000001s"},
		{"neither Ratio nor MinRetriesPerSecond", retry.BudgetConfig{Ratio: retry.NoBudgetRatio, MinRetriesPerSecond: retry.NoBudgetMinimum},
			"retry: set Ratio or MinRetriesPerSecond, not neither: such a budget allows no retry"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			b, err := retry.NewBudget(tt.cfg)
			assert.Nil(t, b)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestBudgetDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, retry.BudgetConfig{})
		assert.Equal(t, retry.BudgetConfig{Ratio: 0.2, MinRetriesPerSecond: 10, Window: 10 * time.Second}, b.Config())
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 100}, b.Metrics(), "10 a second over 10s")
		again, err := retry.NewBudget(b.Config())
		require.NoError(t, err)
		assert.Equal(t, b.Config(), again.Config())
	})
}

func TestBudgetAcceptsBoundaryValues(t *testing.T) {
	for _, cfg := range []retry.BudgetConfig{
		{Ratio: 0.001}, {Ratio: 1000}, {Ratio: retry.NoBudgetRatio},
		{MinRetriesPerSecond: 1}, {MinRetriesPerSecond: 1_000_000}, {MinRetriesPerSecond: retry.NoBudgetMinimum},
		{Window: time.Second}, {Window: time.Hour},
	} {
		_, err := retry.NewBudget(cfg)
		assert.NoError(t, err, "%+v", cfg)
	}
}

func TestNilBudgetIsHarmless(t *testing.T) {
	var b *retry.Budget
	assert.Equal(t, retry.BudgetConfig{}, b.Config())
	assert.Equal(t, retry.BudgetMetrics{}, b.Metrics())
}

// TestBudgetEarnsRetriesFromCalls: Ratio 0.5 and no reserve: two calls earn one retry.
func TestBudgetEarnsRetriesFromCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, retry.BudgetConfig{Ratio: 0.5, MinRetriesPerSecond: retry.NoBudgetMinimum})
		r := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, Budget: b})
		assert.Same(t, b, r.Config().Budget)
		for range 4 {
			_, err := retry.Execute(context.Background(), r, newScript(ok("ok")).call)
			require.NoError(t, err)
		}
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 2, NumberOfDeposits: 4}, b.Metrics())

		// A fifth call brings 2.5 retries: it retries twice, and the budget refuses the third.
		rec := record(t, r)
		s := newScript(fail(errGateway))
		_, err := retry.Execute(context.Background(), r, s.call)
		assert.Equal(t, 3, s.count())
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 3, MaxAttempts: 5, LastErr: errGateway,
			Reason: retry.ErrBudgetExhausted}, *mre)
		assert.ErrorIs(t, err, retry.ErrBudgetExhausted)
		assert.ErrorIs(t, err, errGateway)
		assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.NotErrorIs(t, err, retry.ErrMaxDurationExceeded)
		assert.EqualError(t, err, "retry: Retry 'test' stopped after 3 of 5 attempts (retry budget exhausted): gateway 503")
		assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventError}, rec.types())
		assert.Equal(t, metrics(4, 0, 0, 1, 7), r.Metrics())
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 0, NumberOfDeposits: 5, NumberOfWithdrawals: 2,
			NumberOfRefusedRetries: 1}, b.Metrics())

		// Half a retry is left: a sixth call makes it one.
		s = newScript(fail(errGateway), ok("ok"))
		v, err := retry.Execute(context.Background(), r, s.call)
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 0, NumberOfDeposits: 6, NumberOfWithdrawals: 3,
			NumberOfRefusedRetries: 1}, b.Metrics())
	})
}

// TestBudgetWindowSlides: a deposit and a withdrawal leave the budget with their slot, a tenth
// of the window, once the whole window has passed.
func TestBudgetWindowSlides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, retry.BudgetConfig{Ratio: 1, MinRetriesPerSecond: 1, Window: 10 * time.Second})
		r := newRetry(t, retry.Config{MaxAttempts: 100, WaitDuration: retry.NoWait, Budget: b})
		available := func() int64 { return b.Metrics().AvailableRetries }
		start := time.Now()
		require.Equal(t, int64(10), available(), "the reserve: 1 a second over 10s")

		// At 0: a call retries 11 times (its own deposit earns 1, the reserve holds 10) and is
		// refused the 12th retry.
		s := newScript(fail(errGateway))
		_, err := retry.Execute(context.Background(), r, s.call)
		require.ErrorIs(t, err, retry.ErrBudgetExhausted)
		assert.Equal(t, 12, s.count())
		assert.Equal(t, int64(0), available())

		// At 2.5s: 3 calls that succeed deposit 3.
		time.Sleep(2500 * ms)
		for range 3 {
			_, err := retry.Execute(context.Background(), r, newScript(ok("ok")).call)
			require.NoError(t, err)
		}
		assert.Equal(t, int64(3), available())

		time.Sleep(10*time.Second - 1 - time.Since(start))
		assert.Equal(t, int64(3), available(), "at 10s − 1ns the first slot is still in the window")
		time.Sleep(1)
		assert.Equal(t, int64(13), available(), "at 10s the 11 retries and the deposit of 0 left: reserve 10 + 3")
		time.Sleep(12*time.Second - 1 - time.Since(start))
		assert.Equal(t, int64(13), available(), "slot [2s, 3s) holds the 3 deposits until 12s")
		time.Sleep(1)
		assert.Equal(t, int64(10), available(), "at 12s only the reserve is left")
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 10, NumberOfDeposits: 4, NumberOfWithdrawals: 11,
			NumberOfRefusedRetries: 1}, b.Metrics())
	})
}

// TestBudgetSharedByRetries: two Retry instances draw from one budget.
func TestBudgetSharedByRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, retry.BudgetConfig{Ratio: 1, MinRetriesPerSecond: retry.NoBudgetMinimum})
		first := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait, Budget: b})
		second, err := retry.New("second", retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, Budget: b})
		require.NoError(t, err)
		for range 2 {
			_, err := retry.Execute(context.Background(), first, newScript(ok("ok")).call)
			require.NoError(t, err)
		}
		// The second's call finds 2 + its own 1 = 3 retries, and takes them all.
		s := newScript(fail(errGateway))
		_, err = retry.Execute(context.Background(), second, s.call)
		require.ErrorIs(t, err, retry.ErrBudgetExhausted)
		assert.Equal(t, 4, s.count())
		// The first's next call earns 1 and retries once.
		s = newScript(fail(errGateway))
		_, err = retry.Execute(context.Background(), first, s.call)
		require.ErrorIs(t, err, retry.ErrBudgetExhausted)
		assert.Equal(t, 2, s.count())
		assert.Equal(t, retry.BudgetMetrics{NumberOfDeposits: 4, NumberOfWithdrawals: 4, NumberOfRefusedRetries: 2}, b.Metrics())
	})
}

// TestBudgetChecksLast: a retry stopped by MaxAttempts, an error not retried or MaxDuration
// withdraws nothing.
func TestBudgetChecksLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, retry.BudgetConfig{Ratio: retry.NoBudgetRatio, MinRetriesPerSecond: 1})
		r := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Second, MaxDuration: 1500 * ms, Budget: b,
			IgnoreErrors: []error{errInvalid}})
		_, err := retry.Execute(context.Background(), r, newScript(fail(errInvalid)).call)
		require.True(t, err == errInvalid)
		_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		require.Nil(t, err.(*retry.MaxRetriesExceededError).Reason, "attempts ran out")
		slow := func(context.Context) (string, error) { time.Sleep(time.Second); return "", errGateway }
		_, err = retry.Execute(context.Background(), r, slow)
		require.ErrorIs(t, err, retry.ErrMaxDurationExceeded)
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 9, NumberOfDeposits: 3, NumberOfWithdrawals: 1}, b.Metrics())
	})
}

func TestBudgetOnResults(t *testing.T) {
	for _, failAfter := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			b := newBudget(t, retry.BudgetConfig{Ratio: 1, MinRetriesPerSecond: retry.NoBudgetMinimum})
			r := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait, Budget: b,
				RetryOnResultPredicate: isPending, FailAfterMaxAttempts: failAfter})
			s := newScript(ok("PENDING"))
			v, err := retry.Execute(context.Background(), r, s.call)
			assert.Equal(t, "PENDING", v)
			assert.Equal(t, 2, s.count(), "one retry earned by the call itself")
			assert.Equal(t, metrics(0, 0, 0, 1, 2), r.Metrics())
			if !failAfter {
				assert.NoError(t, err)
				return
			}
			var mre *retry.MaxRetriesExceededError
			require.ErrorAs(t, err, &mre)
			assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 2, MaxAttempts: 5,
				LastResult: "PENDING", Reason: retry.ErrBudgetExhausted}, *mre)
		})
	}
}

// TestBudgetPreventsARetryStorm: 1,000 concurrent callers against a dead dependency (each
// attempt fails after 100ms). Without a budget they would make MaxAttempts × 1,000 = 5,000
// attempts; with Ratio 0.1 and a reserve of 10 a second over 10s (100 retries) they make
// 1,000 + 0.1 × 1,000 + 100 = 1,200, exactly the bound (1 + ratio) × calls + reserve: every
// call deposits before any attempt fails, so the budget holds 200 retries at 100ms; those 200
// retries fail at 250ms and find it empty.
func TestBudgetPreventsARetryStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			callers = 1000
			ratio   = 0.1
			minimum = 10 * 10 // MinRetriesPerSecond × Window in seconds
		)
		b := newBudget(t, retry.BudgetConfig{Ratio: ratio, MinRetriesPerSecond: 10, Window: 10 * time.Second})
		r := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: 50 * ms, Budget: b})
		errDead := errors.New("dependency down")
		var attempts atomic.Int64
		dead := func(context.Context) (string, error) {
			attempts.Add(1)
			time.Sleep(100 * ms)
			return "", errDead
		}
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		byAttempts := map[int]int{}
		for range callers {
			wg.Go(func() {
				_, err := retry.Execute(context.Background(), r, dead)
				var mre *retry.MaxRetriesExceededError
				if !errors.As(err, &mre) || !errors.Is(err, retry.ErrBudgetExhausted) || !errors.Is(err, errDead) {
					t.Errorf("unexpected error %v", err)
					return
				}
				mu.Lock()
				byAttempts[mre.Attempts]++
				mu.Unlock()
			})
		}
		wg.Wait()

		bound := int64((1+ratio)*callers + minimum)
		assert.Equal(t, int64(1200), attempts.Load())
		assert.LessOrEqual(t, attempts.Load(), bound)
		assert.Equal(t, map[int]int{1: 800, 2: 200}, byAttempts)
		assert.Equal(t, 250*ms, time.Since(start))
		assert.Equal(t, retry.BudgetMetrics{AvailableRetries: 0, NumberOfDeposits: 1000, NumberOfWithdrawals: 200,
			NumberOfRefusedRetries: 1000}, b.Metrics())
		assert.Equal(t, metrics(0, 0, 0, 1000, 1200), r.Metrics())
	})
}

func TestExecuteWithBudgetAndMaxDurationAllocatesNothing(t *testing.T) {
	b := newBudget(t, retry.BudgetConfig{})
	r := newRetry(t, retry.Config{MaxDuration: time.Second, Budget: b})
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		n := 42
		v, err := retry.Execute(ctx, r, func(context.Context) (int, error) { return n, nil })
		if err != nil {
			panic(err)
		}
		sink += v
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(1001), b.Metrics().NumberOfDeposits)
}

func BenchmarkExecuteSuccessWithBudgetParallel(b *testing.B) {
	budget := newBudget(b, retry.BudgetConfig{})
	r := newRetry(b, retry.Config{Budget: budget})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = retry.Execute(ctx, r, func(context.Context) (int, error) { return 1, nil })
		}
	})
}

// TestPropertyBudgetMatchesModel: over a window in which nothing expires (1h), every retry is
// allowed exactly when reserve + Ratio × calls − retries holds a whole retry, counted in
// thousandths, so retries never exceed Ratio × calls + reserve.
func TestPropertyBudgetMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ratio := rapid.OneOf(rapid.Just(retry.NoBudgetRatio), rapid.Float64Range(0.001, 3)).Draw(t, "ratio")
		minimum := rapid.OneOf(rapid.Just(retry.NoBudgetMinimum), rapid.IntRange(1, 3)).Draw(t, "minimum")
		if ratio == retry.NoBudgetRatio && minimum == retry.NoBudgetMinimum {
			minimum = 1
		}
		b, err := retry.NewBudget(retry.BudgetConfig{Ratio: ratio, MinRetriesPerSecond: minimum, Window: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		r, err := retry.New("p", retry.Config{MaxAttempts: 1000, WaitDuration: retry.NoWait, Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		var perCall, balance int64 // thousandths of a retry
		if ratio != retry.NoBudgetRatio {
			perCall = int64(math.Floor(ratio*1000 + 1e-6))
		}
		if minimum != retry.NoBudgetMinimum {
			balance = int64(minimum) * 3600 * 1000
		}
		var calls, retries, refused int64
		for i, failures := range rapid.SliceOfN(rapid.IntRange(0, 999), 1, 40).Draw(t, "failures") {
			c := r.NewContext()
			calls++
			balance += perCall
			for f := range failures {
				_, again := c.OnError(errGateway)
				want := balance >= 1000
				if again != want {
					t.Fatalf("call %d, failure %d: retry %v, model %v (balance %d)", i, f, again, want, balance)
				}
				if !again {
					refused++
					break
				}
				retries++
				balance -= 1000
			}
			c.OnSuccess()
		}
		want := retry.BudgetMetrics{AvailableRetries: balance / 1000, NumberOfDeposits: calls,
			NumberOfWithdrawals: retries, NumberOfRefusedRetries: refused}
		if got := b.Metrics(); got != want {
			t.Fatalf("metrics %+v, model %+v", got, want)
		}
		if float64(retries) > max(ratio, 0)*float64(calls)+float64(max(minimum, 0)*3600)+1e-9 {
			t.Fatalf("%d retries for %d calls", retries, calls)
		}
	})
}

// TestBudgetRatioKeptToAThousandth: the ratio is rounded down to a thousandth, never up, and
// float error does not cost a thousandth.
func TestBudgetRatioKeptToAThousandth(t *testing.T) {
	tests := []struct {
		ratio float64
		calls int
		want  int64
	}{
		{1.001, 1000, 1001}, // 1.001 × 1000 is 1000.9999999999999 in float64
		{0.1, 1000, 100},
		{0.0019, 1000, 1}, // one thousandth
		{0.001, 999, 0},
		{2.5, 3, 7},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			b := newBudget(t, retry.BudgetConfig{Ratio: tt.ratio, MinRetriesPerSecond: retry.NoBudgetMinimum})
			r := newRetry(t, retry.Config{Budget: b})
			for range tt.calls {
				c := r.NewContext()
				c.OnSuccess()
			}
			assert.Equal(t, tt.want, b.Metrics().AvailableRetries, "ratio %v, %d calls", tt.ratio, tt.calls)
		})
	}
}

// TestBudgetHammer: 50 goroutines call a dependency that fails half the time through one
// budget for 30s, crossing window slots concurrently (under -race). Every retry the budget
// allowed is an attempt, every refusal ends a call, and over the run the retries stay within
// Ratio × calls plus one reserve per window begun (the reserve refills as windows pass).
func TestBudgetHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const goroutines, ratio, reserve = 50, 0.1, 2 * 2 // MinRetriesPerSecond 2 over 2s
		b := newBudget(t, retry.BudgetConfig{Ratio: ratio, MinRetriesPerSecond: 2, Window: 2 * time.Second})
		r := newRetry(t, retry.Config{MaxAttempts: 4, WaitDuration: 70 * ms, Budget: b})
		var attempts, refused atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				n := g
				for start := time.Now(); time.Since(start) < 30*time.Second; {
					_, err := retry.Execute(context.Background(), r, func(context.Context) (int, error) {
						attempts.Add(1)
						n++
						time.Sleep(ms * time.Duration(1+n%7))
						if n%2 == 0 {
							return 0, errGateway
						}
						return n, nil
					})
					if errors.Is(err, retry.ErrBudgetExhausted) {
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
		m := b.Metrics()
		assert.Equal(t, m.NumberOfDeposits+m.NumberOfWithdrawals, attempts.Load())
		assert.Equal(t, m.NumberOfRefusedRetries, refused.Load())
		assert.Positive(t, m.NumberOfRefusedRetries, "the budget did refuse")
		windows := int64(16) // 30s and the last calls' end, in 2s windows, begun
		assert.LessOrEqual(t, float64(m.NumberOfWithdrawals), ratio*float64(m.NumberOfDeposits)+float64(reserve*windows))
		assert.Equal(t, m.NumberOfDeposits, r.Metrics().NumberOfSuccessfulCallsWithoutRetryAttempt+
			r.Metrics().NumberOfSuccessfulCallsWithRetryAttempt+r.Metrics().NumberOfFailedCallsWithRetryAttempt+
			r.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	})
}
