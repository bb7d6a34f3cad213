package leveeconfig_test

import (
	"context"
	"fmt"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// levee's own patterns are configured under levee, in Resilience4j's style, and built with
// NewOverload.
func ExampleConfig_NewOverload() {
	yml := []byte(`
levee:
  adaptive:
    configs:
      default:
        limitAlgorithm: AIMD
    instances:
      checkout:
        initialLimit: 8
        maxLimit: 64
        prioritizer: shared
  prioritizer:
    instances:
      shared: {queueFull: 3}
  throttle:
    instances:
      backend: {k: 1.5, window: 1m}
`)
	cfg, err := leveeconfig.Parse("application.yml", yml, leveeconfig.Options{Environ: []string{"LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAXLIMIT=32"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	o, _ := cfg.NewOverload()
	l := o.Limiters["checkout"]
	fmt.Println(l.Config().Algorithm, l.Config().InitialLimit, l.Config().MaxLimit, l.Metrics().Limit)
	fmt.Println(cfg.PrioritizerOf(o, "checkout").Name(), o.Prioritizers["shared"].Config().QueueFull)
	fmt.Println(o.Throttlers["backend"].Config().K, o.Throttlers["backend"].Config().Window)
	got, err := adaptive.Execute(context.Background(), l, func(context.Context) (string, error) { return "ok", nil })
	fmt.Println(got, err)
	for _, s := range cfg.Settings(leveeconfig.Adaptive, "checkout")[:4] {
		fmt.Printf("%s = %s (%s)\n", s.Key, s.Value, s.Source)
	}
	// Output:
	// AIMD 8 32 8
	// shared 3
	// 1.5 1m0s
	// ok <nil>
	// limitAlgorithm = AIMD (application.yml:6)
	// initialLimit = 8 (application.yml:9)
	// minLimit = 1 (default)
	// maxLimit = 32 (env LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAXLIMIT)
}

// The file may choose its own profiles, as a Spring Boot application.yml: spring.profiles.active
// (which SPRING_PROFILES_ACTIVE or Options.Profiles replace) and spring.profiles.include (added
// before them); documents apply by Spring's profile expressions.
func Example_profiles() {
	yml := []byte(`
spring.profiles:
  active: prod
  include: [common]
resilience4j.retry.instances.payment:
  maxAttempts: 2
  waitDuration: 10ms
---
spring.config.activate.on-profile: prod & !eu
resilience4j.retry.instances.payment.maxAttempts: 4
---
spring.config.activate.on-profile: common
resilience4j.retry.instances.payment.waitDuration: 50ms
`)
	for _, environ := range [][]string{{}, {"SPRING_PROFILES_ACTIVE=prod,eu"}} {
		cfg, err := leveeconfig.Parse("application.yml", yml, leveeconfig.Options{Environ: environ})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(cfg.Profiles)
		for _, s := range cfg.Settings(registry.Retry, "payment")[:2] {
			fmt.Printf("  %s = %s (%s)\n", s.Key, s.Value, s.Source)
		}
	}
	// Output:
	// [common prod]
	//   maxAttempts = 4 (application.yml:10)
	//   waitDuration = 50ms (application.yml:13)
	// [common prod eu]
	//   maxAttempts = 2 (application.yml:6)
	//   waitDuration = 50ms (application.yml:13)
}
