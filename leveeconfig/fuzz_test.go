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

// FuzzParseProperties is FuzzParse for .properties files and levee's own sections: no input
// panics, and an accepted one builds its instances.
func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{
		"resilience4j.retry.instances.a.maxAttempts=2\n#---\nspring.config.activate.on-profile=prod & !eu\n",
		"a\\\n b=c\\u00e9\\\n",
		"levee.adaptive.instances.a.partitions.live.share=0.5\nlevee.adaptive.instances.a.maxLimit=10\n",
		"spring.profiles.include[0]=x\nspring.profiles.group.x=y\nlevee.throttle.instances.t.k=3\n",
		"levee.prioritizer.instances.p.queueStart=\\u",
	} {
		f.Add(seed, "LEVEE_ADAPTIVE_INSTANCES_A_MAXLIMIT=4")
	}
	f.Fuzz(func(t *testing.T, props, env string) {
		c, err := leveeconfig.Parse("fuzz.properties", []byte(props), leveeconfig.Options{Errors: paymentErrors, Environ: []string{env}})
		if err != nil {
			return
		}
		if _, err := c.NewOverload(); err != nil {
			t.Fatalf("a loaded file must make its instances: %v", err)
		}
		reg, err := c.Registry()
		if err != nil {
			t.Fatalf("a loaded file must make its instances: %v", err)
		}
		for _, wp := range reg.WorkerPools() {
			_ = wp.Close()
		}
	})
}
