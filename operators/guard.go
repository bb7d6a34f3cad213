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
// Each attempt asks the breaker's permission, takes one rate-limiter permission, runs under
// the time limit (TimeLimit, default BoundEachElement) and holds a bulkhead permit for its
// whole life; src is called inside all of them, so an error or a panic while building the
// stream is an attempt's failure that the breaker records, Retry retries and fb answers.
// Retry starts a failed attempt over by calling src again. fb, when not nil, answers the
// error the subscription failed with once everything inside has given up. Nil fields of ps
// are skipped. See each operator for its rules.
//
// Guard returns an error, and builds nothing, when src is nil (levee.ErrNilCall), or when an
// option is invalid or does not apply (TimeLimit without ps.TimeLimiter included).
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
		layers = append(layers, RateLimiter(ps.RateLimiter))
	}
	if ps.CircuitBreaker != nil {
		layers = append(layers, CircuitBreaker(ps.CircuitBreaker))
	}
	chain := func() rxgo.Observable {
		obs := Lazy(src)
		for _, l := range layers {
			obs = l(obs)
		}
		return obs
	}
	var obs rxgo.Observable
	if ps.Retry != nil {
		obs = Retry(ps.Retry, func(context.Context) (rxgo.Observable, error) { return chain(), nil })
	} else {
		obs = chain()
	}
	if fb != nil {
		obs = Fallback(fb)(obs)
	}
	return obs, nil
}
