// Package bench measures levee against its peers on the same work, in the same run.
//
// Each file builds, for one pattern, the same guard in every library compared: levee, the
// peers that do the same job (github.com/sony/gobreaker/v2, github.com/failsafe-go/failsafe-go,
// golang.org/x/time/rate, golang.org/x/sync/semaphore, go.uber.org/ratelimit,
// github.com/cenkalti/backoff/v5, github.com/reactivex/rxgo/v2) and a raw baseline (a direct
// call, a buffered channel, a bare context.WithTimeout). A builder returns one Case per
// implementation; the benchmarks time Case.Do serially and under b.RunParallel, and the tests
// check that the cases of one builder agree on outcomes, so that the figures compare equivalent
// guards.
//
// bench is its own module so that the peers never become dependencies of levee's users. See
// README.md for the figures and run.sh to reproduce them.
package bench

import (
	"context"
	"errors"
)

// Case is one implementation of a measured operation.
type Case struct {
	// Impl names the implementation: "levee" first, then the peers and baselines.
	Impl string
	// Do performs the operation once and returns its error, if any. It is safe for concurrent
	// use.
	Do func(ctx context.Context) error
	// Close, when set, releases what the case holds (a context, a goroutine).
	Close func()
}

// CloseAll closes every case that needs it.
func CloseAll(cases []Case) {
	for _, c := range cases {
		if c.Close != nil {
			c.Close()
		}
	}
}

// ErrRefused is what a case returns when a peer whose API answers with a bool refuses.
var ErrRefused = errors.New("bench: refused")

// ErrBoom is the error a failing call returns.
var ErrBoom = errors.New("bench: boom")

// Result is the value a successful call returns.
const Result = 42

// Work is the guarded call in the two shapes the libraries take: with a context (levee and
// a direct call) and without (gobreaker, failsafe-go's Get, backoff's operation).
type Work struct {
	Call  func(ctx context.Context) (int, error)
	Plain func() (int, error)
}

// Succeed is a call that does nothing but return Result, so that each figure is the guard's
// own cost. Its functions are package-level, so passing them to a generic Execute costs no
// closure.
var Succeed = Work{Call: succeed, Plain: succeedPlain}

// Fail is a call that does nothing but return ErrBoom.
var Fail = Work{Call: fail, Plain: failPlain}

func succeed(context.Context) (int, error) { return Result, nil }
func fail(context.Context) (int, error)    { return 0, ErrBoom }
func succeedPlain() (int, error)           { return Result, nil }
func failPlain() (int, error)              { return 0, ErrBoom }
