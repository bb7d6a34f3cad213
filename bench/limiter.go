package bench

import (
	"context"
	"time"

	fsratelimiter "github.com/failsafe-go/failsafe-go/ratelimiter"
	uberratelimit "go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/levee-go/levee/ratelimiter"
)

// LimiterLoad selects whether the measured acquire finds a permit.
type LimiterLoad int

const (
	// LimiterAvailable: a limiter of 1,000 permits per microsecond (10^9 per second), far more
	// than the benchmark can take, so that every acquire succeeds at once.
	LimiterAvailable LimiterLoad = iota
	// LimiterExhausted: a limiter of one permit per hour whose permit is taken, with no wait
	// allowed, so that every acquire is refused at once.
	LimiterExhausted
)

// String names the load as the benchmarks label it.
func (l LimiterLoad) String() string {
	if l == LimiterExhausted {
		return "exhausted"
	}
	return "available"
}

// LimiterCases returns levee's AcquirePermission, x/time/rate's Allow and Wait, uber's Take
// (only for LimiterAvailable: it has no way to refuse, it sleeps) and failsafe-go's
// TryAcquirePermit, on limiters of the same rate and burst. For LimiterExhausted levee's
// TimeoutDuration is NoWait and Wait's context has a deadline one minute away, so that both
// refuse at once a wait of an hour.
func LimiterCases(load LimiterLoad) ([]Case, error) {
	limit, period, burst := 1000, time.Microsecond, 1000
	if load == LimiterExhausted {
		limit, period, burst = 1, time.Hour, 1
	}
	perSecond := rate.Limit(float64(limit) * float64(time.Second) / float64(period))

	lv, err := ratelimiter.New("bench", ratelimiter.Config{
		LimitForPeriod:     limit,
		LimitRefreshPeriod: period,
		TimeoutDuration:    ratelimiter.NoWait,
	})
	if err != nil {
		return nil, err
	}
	xr := rate.NewLimiter(perSecond, burst)
	xw := rate.NewLimiter(perSecond, burst)
	fs := fsratelimiter.NewBursty[int](uint(limit), period)

	waitCtx, cancelWait := context.Background(), func() {}
	if load == LimiterExhausted {
		waitCtx, cancelWait = context.WithTimeout(context.Background(), time.Minute)
		_ = lv.AcquirePermission(context.Background(), 1)
		xr.Allow()
		xw.Allow()
		fs.TryAcquirePermit()
	}

	cases := []Case{
		{Impl: "levee", Do: func(ctx context.Context) error {
			return lv.AcquirePermission(ctx, 1)
		}},
		{Impl: "xrate-allow", Do: func(context.Context) error {
			if !xr.Allow() {
				return ErrRefused
			}
			return nil
		}},
		{Impl: "xrate-wait", Do: func(context.Context) error {
			return xw.Wait(waitCtx)
		}, Close: cancelWait},
	}
	if load == LimiterAvailable {
		ub := uberratelimit.New(int(perSecond))
		cases = append(cases, Case{Impl: "uber", Do: func(context.Context) error {
			ub.Take()
			return nil
		}})
	}
	return append(cases, Case{Impl: "failsafe", Do: func(context.Context) error {
		if !fs.TryAcquirePermit() {
			return ErrRefused
		}
		return nil
	}}), nil
}
