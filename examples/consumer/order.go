package main

import "github.com/levee-go/levee/stream"

// orderOptions keeps each customer's orders in input order, as a Kafka partition keeps a
// key's records: stream.OrderByKey prices the orders of one customer one after the other, in
// the order they were read, and those of different customers side by side, concurrency at a
// time, within a window of 64 orders taken from the stream and not yet sent.
func orderOptions() []stream.Option {
	return []stream.Option{
		stream.OrderByKey(func(e entry) string { return e.Customer }),
		stream.Window(window),
		stream.MaxUncommitted(maxUncommitted),
	}
}
