package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/levee-go/levee/bulkhead"
)

// A bulkhead of two: while two slow charges run, a third is refused at once, without reaching
// the gateway.
func Example() {
	bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 2})
	if err != nil {
		panic(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	charge := func(ctx context.Context) (string, error) {
		started <- struct{}{}
		<-release // the gateway is slow
		return "PAID", nil
	}

	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range 2 {
		wg.Go(func() { results[i], _ = bulkhead.Execute(context.Background(), bh, charge) })
		<-started
	}
	_, err = bulkhead.Execute(context.Background(), bh, charge)
	fmt.Println(err)
	fmt.Println("full:", errors.Is(err, bulkhead.ErrBulkheadFull))
	fmt.Println("available while busy:", bh.Metrics().AvailableConcurrentCalls)

	close(release)
	wg.Wait()
	fmt.Println(results, "available after:", bh.Metrics().AvailableConcurrentCalls)
	// Output:
	// bulkhead: Bulkhead 'payment' is full and does not permit further calls
	// full: true
	// available while busy: 0
	// [PAID PAID] available after: 2
}

// The permit API, for code that cannot wrap the call in one function: every successful Acquire
// is paired with exactly one Release (or ReleasePermission when the call was cancelled).
func ExampleBulkhead_Acquire() {
	bh, _ := bulkhead.New("reports", bulkhead.Config{MaxConcurrentCalls: 1})
	bh.Subscribe(func(e bulkhead.Event) { fmt.Println("event:", e.Name, e.Type) })

	if err := bh.Acquire(context.Background()); err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println("generating the report")
	bh.Release()
	// Output:
	// event: reports CALL_PERMITTED
	// generating the report
	// event: reports CALL_FINISHED
}

// Shrinking the limit at run time never blocks: calls already running finish, and no new call
// is admitted until fewer than the new maximum are in flight.
func ExampleBulkhead_ChangeConfig() {
	bh, _ := bulkhead.New("search", bulkhead.Config{MaxConcurrentCalls: 3})
	for range 3 {
		bh.TryAcquire()
	}
	cfg := bh.Config()
	cfg.MaxConcurrentCalls = 1
	if err := bh.ChangeConfig(cfg); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", bh.Metrics())
	bh.Release()
	bh.Release()
	fmt.Printf("%+v\n", bh.Metrics())
	bh.Release()
	fmt.Printf("%+v\n", bh.Metrics())
	// Output:
	// {AvailableConcurrentCalls:0 MaxAllowedConcurrentCalls:1 NumberOfWaitingCalls:0}
	// {AvailableConcurrentCalls:0 MaxAllowedConcurrentCalls:1 NumberOfWaitingCalls:0}
	// {AvailableConcurrentCalls:1 MaxAllowedConcurrentCalls:1 NumberOfWaitingCalls:0}
}
