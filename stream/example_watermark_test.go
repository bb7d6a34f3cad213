package stream_test

import (
	"context"
	"fmt"

	"github.com/levee-go/levee/stream"
)

// A consumer of a log prices its entries four at a time, in completion order, and commits the
// offset to resume from after each entry it has handled: the watermark, which stays below any
// entry whose result it has not acknowledged, so a restart from the committed offset loses
// nothing.
func ExampleCommitWatermark() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	entries := make(chan int)
	go func() {
		defer close(entries)
		for offset := range 8 {
			select {
			case entries <- offset:
			case <-ctx.Done():
				return
			}
		}
	}()

	committed := stream.NewWatermark()
	prices, err := stream.Map(ctx, entries, nil, func(_ context.Context, offset int) (int, error) {
		return 100 + offset, nil
	}, stream.Concurrency(4), stream.Unordered(), stream.CommitWatermark(committed))
	if err != nil {
		fmt.Println(err)
		return
	}
	total, last := 0, 0
	for r := range prices {
		total += r.Value       // handle the entry...
		committed.Ack(r.Index) // ...then acknowledge it
		if c := committed.Load(); c > last {
			last = c // commit the offset c: every entry below c is handled
		}
	}
	// The stage counts an entry done just after its send returns, so the last Ack may show
	// in Load a moment later; once the output has closed, every entry is counted.
	if c := committed.Load(); c > last {
		last = c
	}
	fmt.Println("total", total, "committed offset", last)
	// Output: total 828 committed offset 8
}
