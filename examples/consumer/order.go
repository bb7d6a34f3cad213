package main

import "github.com/levee-go/levee/stream"

// orderOptions keeps each customer's orders in input order: stream.OrderByKey prices the
// orders of one customer one after the other, in the order they were read, and those of
// different customers side by side, within a window of 64 orders.
func orderOptions() []stream.Option {
	return []stream.Option{stream.Window(window)}
}
