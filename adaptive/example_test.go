package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/stream"
)

// A limiter of one call at a time refuses a second caller while the first runs; the refusal
// is a levee rejection, which breakers do not record and retries do not retry.
func Example() {
	l, err := adaptive.New("search", adaptive.Config{InitialLimit: 1, MaxLimit: 1})
	if err != nil {
		panic(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		adaptive.Execute(context.Background(), l, func(context.Context) (string, error) {
			close(started)
			<-release
			return "hits", nil
		})
	})
	<-started
	_, err = adaptive.Execute(context.Background(), l, func(context.Context) (string, error) { return "hits", nil })
	fmt.Println(err)
	fmt.Println(errors.Is(err, adaptive.ErrLimitExceeded), levee.IsRejection(err))
	close(release)
	wg.Wait()
	m := l.Metrics()
	fmt.Println("limit", m.Limit, "permitted", m.Permitted, "rejected", m.Rejected)
	// Output:
	// adaptive: Limiter 'search' has reached its concurrency limit and does not permit further calls
	// true true
	// limit 1 permitted 1 rejected 1
}

// The permit API, for code that cannot hand the limiter a function: end each permit once, with
// the call's outcome. A deadline is a drop and lowers the limit.
func ExampleLimiter_Acquire() {
	l, err := adaptive.New("search", adaptive.Config{Algorithm: adaptive.AIMD, InitialLimit: 10})
	if err != nil {
		panic(err)
	}
	p, err := l.Acquire(context.Background())
	if err != nil {
		return // refused: answer "busy"
	}
	p.Record(context.DeadlineExceeded)
	fmt.Println("limit", l.Metrics().Limit, "dropped", l.Metrics().Dropped)
	// Output:
	// limit 9 dropped 1
}

// A limiter as a layer of a pipeline guards every element of a stream: at most Limit elements
// reach the dependency at once.
func ExampleDecorator() {
	l, err := adaptive.New("enrich", adaptive.Config{InitialLimit: 2, MaxQueued: 8, MaxWaitDuration: time.Minute})
	if err != nil {
		panic(err)
	}
	in := make(chan int)
	go func() {
		defer close(in)
		for i := 1; i <= 4; i++ {
			in <- i
		}
	}()
	p := levee.Compose[int]().With(adaptive.Decorator[int](l))
	out, err := stream.Map(context.Background(), in, p, func(_ context.Context, v int) (int, error) { return v * 10, nil },
		stream.Concurrency(4))
	if err != nil {
		panic(err)
	}
	for r := range out {
		fmt.Println(r.In, r.Value, r.Err)
	}
	fmt.Println("permitted", l.Metrics().Permitted)
	// Output:
	// 1 10 <nil>
	// 2 20 <nil>
	// 3 30 <nil>
	// 4 40 <nil>
	// permitted 4
}
