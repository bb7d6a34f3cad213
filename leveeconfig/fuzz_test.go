package leveeconfig_test

import (
	"testing"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// FuzzParse checks that no file, however broken, makes Parse panic, and that a file it
// accepts always yields a registry.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		before, after, inheriting, hammerBefore,
		"resilience4j:\n  retry:\n    instances:\n      a: &x {maxAttempts: 2}\n      b: *x\n",
		"resilience4j: [1, 2]\n",
		"resilience4j:\n  retry:\n    instances:\n      a:\n        retryExceptions: [[x]]\n",
		"{\"resilience4j\": {\"bulkhead\": {\"instances\": {\"a\": {\"maxWaitDuration\": \"PT-1S\"}}}}}",
		"resilience4j:\n  thread-pool-bulkhead:\n    instances:\n      a:\n        coreThreadPoolSize: 1\n        maxThreadPoolSize: 1\n",
	} {
		f.Add(seed, "RESILIENCE4J_RETRY_INSTANCES_A_MAXATTEMPTS=4")
	}
	f.Fuzz(func(t *testing.T, yml, env string) {
		c, err := leveeconfig.Parse("fuzz.yml", []byte(yml), leveeconfig.Options{Errors: paymentErrors, Environ: []string{env}})
		if err != nil {
			return
		}
		reg, err := c.Registry()
		if err != nil {
			t.Fatalf("a loaded file must make its instances: %v", err)
		}
		for _, wp := range reg.WorkerPools() {
			_ = wp.Close()
		}
		_ = c.Settings(registry.Retry, "a")
	})
}
