package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The Redis keys of the example.
const (
	ordersStream  = "orders"        // the orders, one entry each, written by the producer
	group         = "pricing"       // the consumer group reading it
	resultsStream = "orders:priced" // one entry per result stored by a consumer
)

// Order is one entry of the orders stream.
type Order struct {
	ID       string // "o-00042"
	Customer string // "c-017", the key whose orders must be priced in order
	Seq      int    // the order's position among its customer's orders, from 0
	SKU      string // "SKU-0123", what the gateway prices
}

// makeOrders returns n orders of the given number of customers, each for one of skus SKUs,
// the same for every run: customers and SKUs are drawn from a fixed seed.
func makeOrders(n, customers, skus int) []Order {
	rng := rand.New(rand.NewPCG(2025, 11))
	next := make([]int, customers)
	orders := make([]Order, n)
	for i := range orders {
		c := rng.IntN(customers)
		orders[i] = Order{
			ID:       fmt.Sprintf("o-%05d", i),
			Customer: fmt.Sprintf("c-%03d", c),
			Seq:      next[c],
			SKU:      fmt.Sprintf("SKU-%04d", rng.IntN(skus)),
		}
		next[c]++
	}
	return orders
}

// values returns the fields of o's stream entry.
func (o Order) values() []any {
	return []any{"id", o.ID, "customer", o.Customer, "seq", o.Seq, "sku", o.SKU}
}

// orderOf reads an Order back from the fields of its stream entry.
func orderOf(fields map[string]any) (Order, error) {
	str := func(k string) string { s, _ := fields[k].(string); return s }
	seq, err := strconv.Atoi(str("seq"))
	if err != nil {
		return Order{}, fmt.Errorf("entry %v: seq: %w", fields, err)
	}
	o := Order{ID: str("id"), Customer: str("customer"), Seq: seq, SKU: str("sku")}
	if o.ID == "" || o.Customer == "" || o.SKU == "" {
		return Order{}, fmt.Errorf("entry %v: not an order", fields)
	}
	return o, nil
}

// produce writes the orders to the orders stream (XADD), 500 to a round trip, and creates the
// consumer group at the stream's start.
func produce(ctx context.Context, rdb *redis.Client, orders []Order) error {
	const chunk = 500
	for start := 0; start < len(orders); start += chunk {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, o := range orders[start:min(start+chunk, len(orders))] {
				p.XAdd(ctx, &redis.XAddArgs{Stream: ordersStream, Values: o.values()})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("producing orders: %w", err)
		}
	}
	if err := rdb.XGroupCreate(ctx, ordersStream, group, "0").Err(); err != nil {
		return fmt.Errorf("creating the group: %w", err)
	}
	return nil
}
