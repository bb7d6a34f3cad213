package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Order is one order of the stream, one line of the JSON Lines file.
type Order struct {
	ID       string    `json:"order_id"`
	Customer string    `json:"customer_id"`
	SKU      string    `json:"sku"`
	Quantity int       `json:"quantity"`
	PlacedAt time.Time `json:"placed_at"`
}

// produced is the producer's account once it has closed its channel: how many orders it sent
// and why it stopped (nil at the end of the input or of the limit).
type produced struct {
	sent int
	err  error
}

// replay reads orders from r, one JSON object per line, and sends them on the returned channel
// as a message broker would deliver them, closing the channel at the end. It is the stream's
// producer: one goroutine that stops as soon as ctx is done, so that it never outlives the
// consumer, and then reports on the second channel.
//
// limit > 0 stops after that many orders. speedup > 0 paces the orders as they were placed
// (PlacedAt), speedup times faster: 3000 replays a shop's seven hours in eight seconds.
// Without pacing a backlog is replayed as fast as the consumer takes it. A producer that falls
// behind (the consumer is slow) sends what is due at once, as a broker delivers a backlog.
// before(i) runs just before order i is sent, when it "arrives".
//
// A line that is not an order stops the stream with an error naming the line: the file is
// generated, so a bad line is a bug, not data to skip.
func replay(ctx context.Context, r io.Reader, limit int, speedup float64, before func(i int)) (<-chan Order, <-chan produced) {
	out := make(chan Order)
	done := make(chan produced, 1)
	go func() {
		defer close(done)
		n, err := send(ctx, r, limit, speedup, before, out)
		close(out)
		done <- produced{sent: n, err: err}
	}()
	return out, done
}

func send(ctx context.Context, r io.Reader, limit int, speedup float64, before func(int), out chan<- Order) (int, error) {
	sc := bufio.NewScanner(r)
	var (
		start time.Time // when the first order was sent
		first time.Time // when the first order was placed
		timer *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	n := 0
	for (limit <= 0 || n < limit) && sc.Scan() {
		var o Order
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			return n, fmt.Errorf("line %d: %w", n+1, err)
		}
		if n == 0 {
			start, first = time.Now(), o.PlacedAt
		} else if speedup > 0 {
			due := start.Add(time.Duration(float64(o.PlacedAt.Sub(first)) / speedup))
			if wait := time.Until(due); wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-timer.C:
				case <-ctx.Done():
					return n, ctx.Err()
				}
			}
		}
		if before != nil {
			before(n)
		}
		select {
		case out <- o:
			n++
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
	return n, sc.Err()
}
