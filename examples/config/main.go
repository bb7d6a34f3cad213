// Command config runs the payment service's PENDING scenario with every pattern built from
// a Spring Boot application.yml written with Resilience4j's keys, and environment overrides
// applied on top of it, as a Spring service tuned per environment without a rebuild:
//
//	go run ./examples/config
//	RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS=2 go run ./examples/config
//	SPRING_PROFILES_ACTIVE=prod RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0=java.io.IOException go run ./examples/config
//	go run ./examples/config -config my-application.yml
//	SPRING_PROFILES_ACTIVE=prod go run ./examples/config -config ./my-config-dir
//
// It prints the instances the file declares and their effective settings (each value with the
// line or variable that set it, or "default"), the warnings, and the pipeline's order; then it
// runs steps A to D against examples/payment's HTTP gateway: a healthy gateway, an invalid
// order, 8 requests against a broken gateway, and its recovery after the breaker's wait. The
// payment instances are Retry(CircuitBreaker(Bulkhead(charge))) with the PENDING fallback
// outermost: a customer's invalid order goes back as it is, anything else answers
// "PENDING:<order> (<error>)", never PAID. The file embedded in the program is the scenario's
// application.yml; with it, the gateway receives 3, 1, then 0 calls six times, and the breaker
// ends OPEN with a failure rate of 80 %, 4 failed and 7 not permitted calls.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

//go:embed application.yml
var applicationYml []byte

// javaErrors maps the file's exception classes to the gateway client's errors.
var javaErrors = map[string]error{
	"demo.r4j.GatewayException":      payment.ErrGateway,
	"demo.r4j.InvalidOrderException": payment.ErrInvalidOrder,
}

// gateway is what the scenario needs of a payment gateway: charging, breaking and mending it,
// and counting the calls it received.
type gateway interface {
	Charge(ctx context.Context, order string) (string, error)
	SetBroken(broken bool)
	Received() int64
}

func main() {
	path := flag.String("config", "", "a Spring Boot application.yml, .properties or .json, or a directory of them (default: the scenario's, embedded)")
	flag.Parse()
	name, data := "application.yml", applicationYml
	if *path != "" {
		name, data = *path, nil // read by leveeconfig.Load, with its profile-specific files
	}
	gw, err := payment.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
	client := payment.NewClient(gw.URL())
	err = run(os.Stdout, name, data, os.Environ(), &httpGateway{gw: gw, client: client})
	client.Close()
	_ = gw.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// httpGateway is examples/payment's gateway, reached over HTTP.
type httpGateway struct {
	gw     *payment.Gateway
	client *payment.Client
}

func (h *httpGateway) Charge(ctx context.Context, order string) (string, error) {
	return h.client.Charge(ctx, order)
}

func (h *httpGateway) SetBroken(broken bool) {
	mode := payment.ModeOK
	if broken {
		mode = payment.ModeFail
	}
	h.gw.SetMode(mode)
}

func (h *httpGateway) Received() int64 { return h.gw.Received() }

// run loads the file named name (data, or with data nil the file or directory itself and the
// application-{profile}.yaml, .yml and .properties files beside it) with environ's profiles
// (SPRING_PROFILES_ACTIVE, else the file's spring.profiles.active) and overrides, prints the
// configuration, and runs the scenario against gw.
func run(w io.Writer, name string, data []byte, environ []string, gw gateway) error {
	opts := leveeconfig.Options{Errors: javaErrors, Environ: environ}
	var cfg *leveeconfig.Config
	var err error
	if data == nil {
		cfg, err = leveeconfig.Load(name, opts)
	} else {
		cfg, err = leveeconfig.Parse(name, data, opts)
	}
	if err != nil {
		return err
	}
	reg, err := cfg.Registry()
	if err != nil {
		return err
	}
	printConfig(w, cfg, environ)

	pending, err := fallback.New("payment",
		fallback.OnError(payment.ErrInvalidOrder, fallback.FailFast[string](func(cause error) error { return cause })),
		fallback.OnAny(answerPending),
	)
	if err != nil {
		return err
	}
	pay, err := leveeconfig.Pipeline(cfg, reg, "payment", pending)
	if err != nil {
		return err
	}
	cb, err := reg.CircuitBreaker("payment")
	if err != nil {
		return err
	}
	call := func(order string) string {
		ctx := context.WithValue(context.Background(), orderKey{}, order)
		answer, err := pay.Execute(ctx, func(ctx context.Context) (string, error) { return gw.Charge(ctx, order) })
		var invalid *payment.InvalidOrderError
		switch {
		case errors.As(err, &invalid):
			return fmt.Sprintf("Invalid order: %s (HTTP %d)", invalid.Order, invalid.Status)
		case err != nil:
			return "error: " + err.Error()
		}
		return answer
	}

	fmt.Fprintln(w, "--- A. healthy gateway")
	fmt.Fprintln(w, call("DH001"))

	fmt.Fprintln(w, "--- B. invalid order data (4xx): no retry, not counted by the breaker")
	before := gw.Received()
	fmt.Fprintln(w, call("BAD1"))
	fmt.Fprintf(w, "   gateway received %d call\n", gw.Received()-before)

	fmt.Fprintln(w, "--- C. broken gateway: 8 consecutive requests")
	gw.SetBroken(true)
	for i := 1; i <= 8; i++ {
		before := gw.Received()
		answer := call(fmt.Sprintf("DH%03d", i))
		fmt.Fprintf(w, "req %d -> %s | gateway received %d more calls\n", i, answer, gw.Received()-before)
	}
	fmt.Fprintf(w, "   breaker: %s\n", breakerLine(cb))

	wait := cfg.CircuitBreakers.Instances["payment"].WaitDurationInOpenState + 200*time.Millisecond
	fmt.Fprintf(w, "--- D. wait %v, then the gateway recovers\n", wait)
	time.Sleep(wait)
	gw.SetBroken(false)
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(w, "probe %d -> %s\n", i, call(fmt.Sprintf("OK%d", i)))
		fmt.Fprintf(w, "   breaker: %s\n", breakerLine(cb))
	}
	return nil
}

// printConfig prints the overrides, the warnings, the order and every instance's settings.
func printConfig(w io.Writer, cfg *leveeconfig.Config, environ []string) {
	fmt.Fprintf(w, "config: %s\n", cfg.File)
	fmt.Fprintf(w, "profiles: %s\n", strings.Join(cfg.Profiles, ", "))
	for _, kv := range environ {
		if strings.HasPrefix(kv, "RESILIENCE4J_") {
			fmt.Fprintf(w, "override: %s\n", kv)
		}
	}
	for _, warning := range cfg.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	fmt.Fprintf(w, "order: %s\n", leveeconfig.DescribeOrder(cfg.Order))
	for _, p := range []registry.Pattern{registry.CircuitBreaker, registry.Retry, registry.Bulkhead,
		registry.WorkerPool, registry.RateLimiter, registry.TimeLimiter} {
		for _, name := range cfg.Names(p) {
			fmt.Fprintf(w, "%s %s\n", p, name)
			for _, s := range cfg.Settings(p, name) {
				fmt.Fprintf(w, "  %s: %s  (%s)\n", s.Key, s.Value, s.Source)
			}
		}
	}
}

type orderKey struct{}

// answerPending is the scenario's fallback: "PENDING:<order> (<error kind>)".
func answerPending(ctx context.Context, err error) (string, error) {
	kind := "GatewayException"
	if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
		kind = "CallNotPermittedException"
	}
	return fmt.Sprintf("PENDING:%s (%s)", ctx.Value(orderKey{}), kind), nil
}

// breakerLine renders the breaker as the scenario's actuator line.
func breakerLine(cb *circuitbreaker.CircuitBreaker) string {
	m := cb.Metrics()
	return fmt.Sprintf("%s | failureRate %.1f%% | failed %d | notPermitted %d",
		m.State, m.FailureRate, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls)
}
