package leveeconfig_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

var errGateway = errors.New("gateway error")

// A file with Resilience4j's Spring keys becomes named instances in a registry, and a
// pipeline in the file's aspect order.
func Example() {
	yml := []byte(`
resilience4j:
  circuitbreaker:
    configs:
      default:
        slidingWindowSize: 10
    instances:
      payment:
        minimumNumberOfCalls: 5
        waitDurationInOpenState: PT3S
        recordExceptions: [demo.r4j.GatewayException]
  retry:
    instances:
      payment:
        maxAttempts: 2
        waitDuration: 0
`)
	cfg, err := leveeconfig.Parse("application.yml", yml, leveeconfig.Options{
		Errors:  map[string]error{"demo.r4j.GatewayException": errGateway},
		Environ: []string{"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS=3"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, _ := cfg.Registry()
	pay, _ := leveeconfig.Pipeline[string](cfg, reg, "payment", nil)

	calls := 0
	_, err = pay.Execute(context.Background(), func(context.Context) (string, error) {
		calls++
		return "", errGateway
	})
	cb, _ := reg.FindCircuitBreaker("payment")
	fmt.Println(err, calls, cb.Metrics().NumberOfFailedCalls)
	for _, s := range cfg.Settings(registry.Retry, "payment")[:2] {
		fmt.Printf("retry.payment.%s = %s (%s)\n", s.Key, s.Value, s.Source)
	}
	fmt.Println(leveeconfig.DescribeOrder(cfg.Order))
	// Output:
	// retry: Retry 'payment' has exhausted all attempts (3): gateway error 3 3
	// retry.payment.maxAttempts = 3 (env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS)
	// retry.payment.waitDuration = 0 (application.yml:16)
	// Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))
}

// Every mistake is reported with its file, line and key path.
func ExampleParse_errors() {
	yml := []byte(`resilience4j:
  bulkhead:
    instances:
      payment:
        maxConcurrentCalls: three
        maxWaitTime: 1s
`)
	_, err := leveeconfig.Parse("application.yml", yml, leveeconfig.Options{Environ: []string{}})
	fmt.Println(err)
	// Output:
	// application.yml:5: resilience4j.bulkhead.instances.payment.maxConcurrentCalls: "three" is not an integer: must be at least 0
	// application.yml:6: resilience4j.bulkhead.instances.payment.maxWaitTime: unknown key of bulkhead
}

// A new file changes the running instances where Resilience4j can, and says what it could
// not change.
func ExampleConfig_Reload() {
	opts := leveeconfig.Options{Environ: []string{}}
	cfg, _ := leveeconfig.Parse("v1.yml", []byte(`resilience4j:
  ratelimiter:
    instances:
      search:
        limitForPeriod: 10
        limitRefreshPeriod: 1s
`), opts)
	reg, _ := cfg.Registry()
	next, _ := leveeconfig.Parse("v2.yml", []byte(`resilience4j:
  ratelimiter:
    instances:
      search:
        limitForPeriod: 20
        limitRefreshPeriod: 2s
`), opts)
	unchanged, _ := cfg.Reload(reg, next)
	rl, _ := reg.FindRateLimiter("search")
	fmt.Println(rl.Config().LimitForPeriod)
	for _, u := range unchanged {
		fmt.Println(u)
	}
	// Output:
	// 20
	// ratelimiter search limitRefreshPeriod 1s -> 2s: the cycle of a running RateLimiter cannot change, as in Resilience4j (only limitForPeriod and timeoutDuration can)
}

func ExampleParseDuration() {
	for _, s := range []string{"100", "100ms", "3s", "PT3S", "PT0.5S", "2d"} {
		d, _ := leveeconfig.ParseDuration(s)
		fmt.Println(s, d)
	}
	// Output:
	// 100 100ms
	// 100ms 100ms
	// 3s 3s
	// PT3S 3s
	// PT0.5S 500ms
	// 2d 48h0m0s
}

// ReloadReport says what a reload applied, beside what it could not.
func ExampleConfig_ReloadReport() {
	opts := leveeconfig.Options{Environ: []string{}}
	cfg, _ := leveeconfig.Parse("v1.yml", []byte(`resilience4j:
  ratelimiter:
    instances:
      search:
        limitForPeriod: 10
        limitRefreshPeriod: 1s
        timeoutDuration: 0
`), opts)
	reg, _ := cfg.Registry()
	next, _ := leveeconfig.Parse("v2.yml", []byte(`resilience4j:
  ratelimiter:
    instances:
      search:
        limitForPeriod: 20
        limitRefreshPeriod: 2s
        timeoutDuration: 0
`), leveeconfig.Options{Environ: []string{"RESILIENCE4J_BULKHEAD_INSTANCES_AUDIT_MAXCONCURRENTCALLS=4"}})
	rep, _ := cfg.ReloadReport(reg, next)
	for _, ch := range rep.Applied {
		fmt.Println("applied:", ch)
	}
	for _, u := range rep.Unchanged {
		fmt.Println("unchanged:", u.Pattern, u.Name, u.Key)
	}
	// Output:
	// applied: bulkhead audit created (env RESILIENCE4J_BULKHEAD_INSTANCES_AUDIT_MAXCONCURRENTCALLS)
	// applied: ratelimiter search limitForPeriod 10 -> 20 (v2.yml:5)
	// unchanged: ratelimiter search limitRefreshPeriod
}

// A document with spring.config.activate.on-profile applies for its profile only; the active
// profiles come from Options.Profiles or SPRING_PROFILES_ACTIVE, as in Spring. Indexed
// variables give a list entry by entry.
func ExampleParse_profiles() {
	file := []byte(`resilience4j.retry.instances.payment:
  maxAttempts: 3
  waitDuration: 100MS
---
spring.config.activate.on-profile: prod
resilience4j.retry.instances.payment.maxAttempts: 5
`)
	for _, environ := range [][]string{
		{},
		{"SPRING_PROFILES_ACTIVE=prod", "RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0=java.io.IOException"},
	} {
		cfg, err := leveeconfig.Parse("application.yml", file, leveeconfig.Options{Environ: environ})
		if err != nil {
			fmt.Println(err)
			continue
		}
		r := cfg.Retries.Instances["payment"]
		fmt.Println(cfg.Profiles, r.MaxAttempts, r.WaitDuration, len(r.RetryErrors))
	}
	// Output:
	// [default] 3 100ms 0
	// [prod] 5 100ms 2
}
