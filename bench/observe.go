package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
)

// Observed is one way of watching a breaker, for the Observers benchmark: the Case runs a
// successful call through the breaker's Execute.
type Observed struct {
	Case
	// Breaker is the breaker the case calls, named "payment" and kept in Registry.
	Breaker  *circuitbreaker.CircuitBreaker
	Registry *registry.Registry
	// Prometheus holds the collector of the "prometheus" case; nil in the others.
	Prometheus *prometheus.Registry
	// Reader is the OpenTelemetry SDK's manual reader of the "otel" and "otel-producer" cases; nil in the others.
	Reader *sdkmetric.ManualReader
}

// ObserverCases returns the count-window breaker of the Breaker benchmark (100 calls, 50 %,
// closed) five times, each running a successful call, watched by:
//
//   - "none": nothing; the breaker builds no event;
//   - "prometheus": a leveeprom.Collector registered on a Prometheus registry of its own;
//   - "otel": a leveeotel.Metrics on an SDK MeterProvider read by a manual reader;
//   - "slog-info": Config.Logger, a text handler at level Info writing to logw (io.Discard
//     when nil), which logs no successful call;
//   - "otel-producer": leveeotel.Metrics with WithoutCallsHistogram, and the calls histogram
//     produced from the breaker's CallStats by leveeotel.NewCallsProducer on the manual reader.
//
// Each case's Close detaches its observer and shuts its provider down.
func ObserverCases(logw io.Writer) ([]Observed, error) {
	if logw == nil {
		logw = io.Discard
	}
	var out []Observed
	for _, impl := range []string{"none", "prometheus", "otel", "slog-info", "otel-producer"} {
		o, err := observed(impl, logw)
		if err != nil {
			CloseAll(Cases(out))
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func observed(impl string, logw io.Writer) (Observed, error) {
	cfg := circuitbreaker.Config{
		FailureRateThreshold:    breakerRate,
		SlidingWindowSize:       breakerCalls,
		MinimumNumberOfCalls:    breakerCalls,
		WaitDurationInOpenState: breakerOpenWait,
	}
	if impl == "slog-info" {
		cfg.Logger = slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	cb, err := circuitbreaker.New("payment", cfg)
	if err != nil {
		return Observed{}, err
	}
	reg := registry.New()
	if err := reg.AddCircuitBreaker(cb); err != nil {
		return Observed{}, err
	}
	o := Observed{Breaker: cb, Registry: reg}
	o.Impl = impl
	o.Do = func(ctx context.Context) error {
		_, err := circuitbreaker.Execute(ctx, cb, succeed)
		return err
	}
	switch impl {
	case "prometheus":
		c := leveeprom.NewCollector(reg)
		o.Prometheus = prometheus.NewRegistry()
		if err := o.Prometheus.Register(c); err != nil {
			c.Close()
			return Observed{}, err
		}
		o.Close = c.Close
	case "otel", "otel-producer":
		opts := []leveeotel.Option{}
		if impl == "otel-producer" {
			o.Reader = sdkmetric.NewManualReader(sdkmetric.WithProducer(leveeotel.NewCallsProducer(reg)))
			opts = append(opts, leveeotel.WithoutCallsHistogram())
		} else {
			o.Reader = sdkmetric.NewManualReader()
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.Reader))
		m, err := leveeotel.New(reg, append(opts, leveeotel.WithMeterProvider(mp))...)
		if err != nil {
			return Observed{}, errors.Join(err, mp.Shutdown(context.Background()))
		}
		o.Close = func() {
			_ = m.Close()
			_ = mp.Shutdown(context.Background())
		}
	}
	return o, nil
}

// Cases returns the Case of each observed breaker, for runCases and CloseAll.
func Cases(obs []Observed) []Case {
	cases := make([]Case, len(obs))
	for i, o := range obs {
		cases[i] = o.Case
	}
	return cases
}
