package bench

import "testing"

// BenchmarkObservers: a successful call through the count-window breaker with no observer, a
// Prometheus collector, OpenTelemetry metrics and a slog logger at Info attached
// (ObserverCases).
func BenchmarkObservers(b *testing.B) {
	obs, err := ObserverCases(nil)
	if err != nil {
		b.Fatal(err)
	}
	runCases(b, Cases(obs), false)
}
