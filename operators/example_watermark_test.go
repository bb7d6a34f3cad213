package operators_test

import (
	"context"
	"fmt"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee/operators"
)

// A consumer prices the entries of a log two at a time, in completion order, and after each
// value it handles commits the offset to resume from: the watermark, acknowledged in the order
// the values are read.
func ExampleCommitWatermark() {
	committed := operators.NewWatermark()
	price, err := operators.Map(nil, func(_ context.Context, offset int) (int, error) {
		return 100 + offset, nil
	}, operators.Concurrency(2), operators.Unordered(), operators.CommitWatermark(committed))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	total, last := 0, 0
	for it := range price(rxgo.Just(0, 1, 2, 3, 4)()).Observe(rxgo.WithContext(ctx)) {
		if it.E != nil {
			fmt.Println(it.E)
			return
		}
		total += it.V.(int) // handle the value...
		committed.AckNext() // ...then acknowledge it
		if c := committed.Load(); c > last {
			last = c // commit the offset c
		}
	}
	// The operator counts an element done just after its send returns, so the last Ack may
	// show in Load a moment later; once the output has closed, every element is counted.
	if c := committed.Load(); c > last {
		last = c // commit the offset c
	}
	fmt.Println("total", total, "committed offset", last)
	// Output: total 510 committed offset 5
}
