package stream_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/levee-go/levee/stream"
)

// A consumer of orders prices four at a time, with the orders of one customer in the order
// they were placed, as the records of one partition key of a log: the output is ordered per
// customer, not across customers, so each customer's orders are listed as they came out.
func ExampleOrderByKey() {
	type order struct {
		customer string
		n        int
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	orders := make(chan order)
	go func() {
		defer close(orders)
		for i, c := range strings.Split("ann bob ann cid bob ann cid ann bob", " ") {
			select {
			case orders <- order{c, i}:
			case <-ctx.Done():
				return
			}
		}
	}()

	priced, err := stream.Map(ctx, orders, nil, func(_ context.Context, o order) (int, error) {
		return 100 + o.n, nil
	}, stream.Concurrency(4), stream.Window(16), stream.OrderByKey(func(o order) string { return o.customer }))
	if err != nil {
		fmt.Println(err)
		return
	}
	byCustomer := map[string][]int{}
	for r := range priced {
		byCustomer[r.In.customer] = append(byCustomer[r.In.customer], r.Value)
	}
	for _, c := range slices.Sorted(maps.Keys(byCustomer)) {
		fmt.Println(c, byCustomer[c])
	}
	// Output:
	// ann [100 102 105 107]
	// bob [101 104 108]
	// cid [103 106]
}
