package stream_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/levee-go/levee/stream"
)

// Updates of accounts are applied four at a time, but never two of one account at once, and
// the results come out in the order of the input, so that the offset committed after each
// one covers exactly the updates before it.
func ExampleOrderByKeyAndInput() {
	type update struct {
		account string
		amount  int
	}
	var mu sync.Mutex
	balance := map[string]int{}
	apply := func(_ context.Context, u update) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		balance[u.account] += u.amount
		return balance[u.account], nil
	}

	updates := make(chan update, 6)
	for _, u := range []update{{"alice", 10}, {"bob", 5}, {"alice", -3}, {"carol", 7}, {"bob", 1}, {"alice", 2}} {
		updates <- u
	}
	close(updates)

	results, err := stream.Map(context.Background(), updates, nil, apply,
		stream.Concurrency(4),
		stream.OrderByKeyAndInput(func(u update) string { return u.account }))
	if err != nil {
		fmt.Println(err)
		return
	}
	for r := range results {
		fmt.Printf("offset %d: %s %+d -> %d\n", r.Index, r.In.account, r.In.amount, r.Value)
	}
	// Output:
	// offset 0: alice +10 -> 10
	// offset 1: bob +5 -> 5
	// offset 2: alice -3 -> 7
	// offset 3: carol +7 -> 7
	// offset 4: bob +1 -> 6
	// offset 5: alice +2 -> 9
}
