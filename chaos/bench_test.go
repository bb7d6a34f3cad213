package chaos_test

import (
	"context"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/chaos"
)

func okCall(context.Context) (int, error) { return 1, nil }

// BenchmarkExecuteDisabled is the price of a strategy left in place, switched off: one atomic
// load and the panic guard every levee pattern has.
func BenchmarkExecuteDisabled(b *testing.B) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{Disabled: true}, Fault: errInjected}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = chaos.Execute(ctx, f, okCall)
	}
}

// BenchmarkCallUnguarded is the same call without a strategy, for comparison.
func BenchmarkCallUnguarded(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = okCall(ctx)
	}
}

// BenchmarkExecuteEnabledNotPicked is a call drawn and not injected (the default rate, 0.001,
// from math/rand/v2's top-level generator).
func BenchmarkExecuteEnabledNotPicked(b *testing.B) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Fault: errInjected}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = chaos.Execute(ctx, f, okCall)
	}
}

// BenchmarkPipelineDisabled is a switched-off strategy as a layer of a levee.Pipeline: the
// layer's one allocation per run is Pipeline.With's, not the strategy's.
func BenchmarkPipelineDisabled(b *testing.B) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{Disabled: true}, Fault: errInjected}))
	p := levee.Compose[int]().With(chaos.Decorator[int](f))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Execute(ctx, okCall)
	}
}
