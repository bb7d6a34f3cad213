package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/chaos"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// A fault injected into three calls in ten, innermost, where the dependency would fail: the
// retry makes up for most of them, the fallback for the rest. The seeded source makes the
// run the same every time.
func ExampleNewFault() {
	errUnavailable := errors.New("inventory: 503 service unavailable")
	fault := levee.Must(chaos.NewFault("inventory", chaos.FaultConfig{
		Config: chaos.Config{InjectionRate: 0.3, Source: rand.NewPCG(1, 2)},
		Fault:  errUnavailable,
	}))
	r := levee.Must(retry.New("inventory", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait}))
	fb := levee.Must(fallback.New("inventory", fallback.OnAny(fallback.Value(-1))))
	p := levee.Compose[int]().With(chaos.Decorator[int](fault)).WithRetry(r).WithFallback(fb)

	stock := func(context.Context) (int, error) { return 12, nil }
	answers := map[int]int{}
	for range 1000 {
		v, _ := p.Execute(context.Background(), stock)
		answers[v]++
	}
	fmt.Println("stock:", answers[12], "fallback:", answers[-1])
	fmt.Printf("%+v\n", fault.Metrics())

	fault.Disable() // chaos off: calls go straight through
	v, err := p.Execute(context.Background(), stock)
	fmt.Println(v, err)
	// Output:
	// stock: 917 fallback: 83
	// {NumberOfInjectedCalls:394 NumberOfPassedCalls:917}
	// 12 <nil>
}

// An outcome that answers an empty list for one call in five, to check what the caller makes
// of it.
func ExampleNewOutcome() {
	empty := levee.Must(chaos.NewOutcome("search", chaos.OutcomeConfig[[]string]{
		Config:  chaos.Config{InjectionRate: 0.2, Source: rand.NewPCG(5, 5)},
		Outcome: func(context.Context) ([]string, error) { return nil, nil },
	}))
	search := func(context.Context) ([]string, error) { return []string{"levee", "dam"}, nil }
	for range 5 {
		v, _ := empty.Execute(context.Background(), search)
		fmt.Println(v)
	}
	// Output:
	// [levee dam]
	// [levee dam]
	// [levee dam]
	// [levee dam]
	// []
}

// A behaviour that runs before about one call in two: here it only counts, where a real one would
// drop a connection or stop a replica.
func ExampleNewBehaviour() {
	dropped := 0
	drop := levee.Must(chaos.NewBehaviour("db", chaos.BehaviourConfig{
		Config:    chaos.Config{InjectionRate: 0.5, Source: rand.NewPCG(2, 2)},
		Behaviour: func(context.Context) error { dropped++; return nil },
	}))
	query := func(context.Context) (string, error) { return "row", nil }
	for range 10 {
		_, _ = chaos.Execute(context.Background(), drop, query)
	}
	fmt.Println("connections dropped:", dropped)
	// Output:
	// connections dropped: 7
}

// A fault in the pipeline of a stream operator fails the elements it is injected into, each
// on its own; the stream goes on. With the default Concurrency of 1, the draws are made in
// input order, so a seeded source fails the same elements every run.
func ExampleDecorator_stream() {
	fault := levee.Must(chaos.NewFault("enrich", chaos.FaultConfig{
		Config: chaos.Config{InjectionRate: 0.3, Source: rand.NewPCG(4, 4)},
		Fault:  errors.New("enrich: injected"),
	}))
	in := make(chan int)
	go func() {
		defer close(in)
		for i := 1; i <= 8; i++ {
			in <- i
		}
	}()
	p := levee.Compose[int]().With(chaos.Decorator[int](fault))
	out, err := stream.Map(context.Background(), in, p, func(_ context.Context, v int) (int, error) { return v * v, nil })
	if err != nil {
		fmt.Println(err)
		return
	}
	for r := range out {
		fmt.Println(r.In, r.Value, r.Err)
	}
	// Output:
	// 1 1 <nil>
	// 2 4 <nil>
	// 3 9 <nil>
	// 4 16 <nil>
	// 5 25 <nil>
	// 6 0 enrich: injected
	// 7 49 <nil>
	// 8 64 <nil>
}
