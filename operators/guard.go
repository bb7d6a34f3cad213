package operators

import (
	"context"
	"errors"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/reactivex/rxgo/v2"
)

// Guard returns an Observable whose every subscription builds the stream with src and runs
// it under the patterns ps as one call, in the default pipeline's order, each pattern in its
// per-subscription form — the Observable counterpart of stream.Subscribe:
//
//	Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(Lazy(src)))))))
//
// Each attempt asks the breaker's permission, takes one rate-limiter permission (Permits for
// more), runs under
// the time limit (TimeLimit, default BoundEachElement) and holds a bulkhead permit for its
// whole life; src is called inside all of them, so an error or a panic while building the
// stream is an attempt's failure that the breaker records, Retry retries and fb answers.
// Retry starts a failed attempt over by calling src again; a src that hands out the same
// single-use Observable again is refused with ErrSingleUse, as under Retry. fb, when not nil,
// answers the error the subscription failed with once everything inside has given up. Nil
// fields of ps are skipped. See each operator for its rules.
//
// Guard returns an error, and builds nothing, when src is nil (levee.ErrNilCall), or when an
// option is invalid or does not apply (TimeLimit without ps.TimeLimiter, Permits without
// ps.RateLimiter included).
func Guard(ps levee.Patterns, fb *fallback.Fallback[rxgo.Observable], src Source, opts ...Option) (rxgo.Observable, error) {
	set, err := collect("Guard", perSubscription, opts)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, levee.ErrNilCall
	}
	if set.bounds != 0 && ps.TimeLimiter == nil {
		return nil, errors.New("operators: TimeLimit needs a Patterns.TimeLimiter")
	}
	if set.permits != 0 && ps.RateLimiter == nil {
		return nil, errors.New("operators: Permits needs a Patterns.RateLimiter")
	}
	var layers []Operator
	if ps.Bulkhead != nil {
		layers = append(layers, Bulkhead(ps.Bulkhead))
	}
	if ps.TimeLimiter != nil {
		tl, err := TimeLimiter(ps.TimeLimiter, set.bounds)
		if err != nil {
			return nil, err
		}
		layers = append(layers, tl)
	}
	if ps.RateLimiter != nil {
		rl, err := RateLimiter(ps.RateLimiter, Permits(set.permitsOr1()))
		if err != nil {
			return nil, err
		}
		layers = append(layers, rl)
	}
	if ps.CircuitBreaker != nil {
		layers = append(layers, CircuitBreaker(ps.CircuitBreaker))
	}
	// One chain, observed once per attempt: every layer is rxgo.Defer-based, and one Lazy
	// for every attempt and subscription is what lets it refuse a src that hands out the same
	// single-use Observable again (ErrSingleUse), which Retry then reports.
	obs := Lazy(src)
	for _, l := range layers {
		obs = l(obs)
	}
	if ps.Retry != nil {
		chain := obs
		obs = Retry(ps.Retry, func(context.Context) (rxgo.Observable, error) { return chain, nil })
	}
	if fb != nil {
		obs = Fallback(fb)(obs)
	}
	return obs, nil
}
