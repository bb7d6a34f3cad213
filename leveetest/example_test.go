package leveetest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/leveetest"
	"github.com/levee-go/levee/retry"
)

// A payment client's pipeline tested against a dependency that fails twice, then answers (the
// retry's third attempt); then against one that is down for good: its fourth invocation is the
// third failure in the breaker's window of four, which opens it, so the retry's next attempts
// are refused without reaching the dependency and the fallback answers. In a
// test, the prints are assertions and the patterns end with leveetest.VerifyIdle(t, ps).
func ExampleStub() {
	ps := levee.Patterns{
		Retry: levee.Must(retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})),
		CircuitBreaker: levee.Must(circuitbreaker.New("payment", circuitbreaker.Config{
			SlidingWindowSize: 4, MinimumNumberOfCalls: 4,
		})),
	}
	fb := levee.Must(fallback.New("payment", fallback.OnAny(fallback.Value("queued"))))
	p := levee.DefaultPipeline(ps, fb)

	errDown := errors.New("payment service down")
	stub := leveetest.NewStub(leveetest.First(2, leveetest.Fail[string](errDown), leveetest.OK("paid")))
	v, err := p.Execute(context.Background(), stub.Call)
	fmt.Println(v, err, stub.Invocations())

	stub.SetBehaviour(leveetest.Fail[string](errDown))
	for range 2 {
		v, err = p.Execute(context.Background(), stub.Call)
		fmt.Println(v, err, stub.Invocations(), ps.CircuitBreaker.State())
	}
	// Output:
	// paid <nil> 3
	// queued <nil> 4 OPEN
	// queued <nil> 4 OPEN
}
