package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/examples/payment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeGateway answers as examples/payment's gateway, in process, so that the scenario runs on
// a fake clock.
type fakeGateway struct {
	mu       sync.Mutex
	received int64
	broken   bool
}

func (g *fakeGateway) Charge(_ context.Context, order string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.received++
	switch {
	case strings.HasPrefix(order, "BAD"):
		return "", &payment.InvalidOrderError{Order: order, Status: 422}
	case g.broken:
		return "", &payment.GatewayError{Status: 503}
	}
	return "PAID:" + order, nil
}

func (g *fakeGateway) SetBroken(broken bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.broken = broken
}

func (g *fakeGateway) Received() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.received
}

func runScenario(t *testing.T, environ []string) string {
	t.Helper()
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		require.NoError(t, run(&out, "application.yml", applicationYml, environ, &fakeGateway{}))
	})
	return out.String()
}

// scenario returns the output from step A on.
func scenario(out string) string {
	return out[strings.Index(out, "--- A."):]
}

func TestTheScenarioFromTheFile(t *testing.T) {
	out := runScenario(t, []string{"HOME=/root"})
	assert.Equal(t, `--- A. healthy gateway
PAID:DH001
--- B. invalid order data (4xx): no retry, not counted by the breaker
Invalid order: BAD1 (HTTP 422)
   gateway received 1 call
--- C. broken gateway: 8 consecutive requests
req 1 -> PENDING:DH001 (GatewayException) | gateway received 3 more calls
req 2 -> PENDING:DH002 (CallNotPermittedException) | gateway received 1 more calls
req 3 -> PENDING:DH003 (CallNotPermittedException) | gateway received 0 more calls
req 4 -> PENDING:DH004 (CallNotPermittedException) | gateway received 0 more calls
req 5 -> PENDING:DH005 (CallNotPermittedException) | gateway received 0 more calls
req 6 -> PENDING:DH006 (CallNotPermittedException) | gateway received 0 more calls
req 7 -> PENDING:DH007 (CallNotPermittedException) | gateway received 0 more calls
req 8 -> PENDING:DH008 (CallNotPermittedException) | gateway received 0 more calls
   breaker: OPEN | failureRate 80.0% | failed 4 | notPermitted 7
--- D. wait 3.2s, then the gateway recovers
probe 1 -> PAID:OK1
   breaker: HALF_OPEN | failureRate -1.0% | failed 0 | notPermitted 0
probe 2 -> PAID:OK2
   breaker: CLOSED | failureRate -1.0% | failed 0 | notPermitted 0
probe 3 -> PAID:OK3
   breaker: CLOSED | failureRate -1.0% | failed 0 | notPermitted 0
`, scenario(out))
	assert.Equal(t, `config: application.yml
profiles: default
order: Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))
circuitbreaker payment
  failureRateThreshold: 50  (application.yml:9)
  slowCallRateThreshold: 100  (default)
  slowCallDurationThreshold: 60s  (default)
  slidingWindowType: COUNT_BASED  (application.yml:6)
  slidingWindowSize: 10  (application.yml:7)
  minimumNumberOfCalls: 5  (application.yml:8)
  waitDurationInOpenState: 3s  (application.yml:10)
  permittedNumberOfCallsInHalfOpenState: 2  (application.yml:11)
  maxWaitDurationInHalfOpenState: 0  (default)
  automaticTransitionFromOpenToHalfOpenEnabled: false  (default)
  enableExponentialBackoff: false  (default)
  exponentialBackoffMultiplier: 1.5  (default)
  enableRandomizedWait: false  (default)
  randomizedWaitFactor: 0.5  (default)
  ignoreExceptions: demo.r4j.InvalidOrderException  (application.yml:12)
  registerHealthIndicator: true  (application.yml:5)
retry payment
  maxAttempts: 3  (application.yml:17)
  waitDuration: 100ms  (application.yml:18)
  enableExponentialBackoff: true  (application.yml:19)
  exponentialBackoffMultiplier: 2  (application.yml:20)
  enableRandomizedWait: false  (default)
  randomizedWaitFactor: 0.5  (default)
  retryExceptions: demo.r4j.GatewayException  (application.yml:21)
  ignoreExceptions: io.github.resilience4j.circuitbreaker.CallNotPermittedException, demo.r4j.InvalidOrderException  (application.yml:23)
  failAfterMaxAttempts: false  (default)
bulkhead payment
  maxConcurrentCalls: 3  (application.yml:29)
  maxWaitDuration: 0  (application.yml:30)
  fairCallHandlingStrategyEnabled: true  (default)
`, out[:strings.Index(out, "--- A.")])
}

// With two attempts per request, the breaker opens on the second request's second failure.
func TestTheScenarioWithAnOverride(t *testing.T) {
	out := runScenario(t, []string{"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS=2"})
	assert.Contains(t, out, "override: RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS=2\n")
	assert.Contains(t, out, "  maxAttempts: 2  (env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPTS)\n")
	sc := scenario(out)
	c := sc[strings.Index(sc, "--- C."):strings.Index(sc, "--- D.")]
	assert.Equal(t, `--- C. broken gateway: 8 consecutive requests
req 1 -> PENDING:DH001 (GatewayException) | gateway received 2 more calls
req 2 -> PENDING:DH002 (GatewayException) | gateway received 2 more calls
req 3 -> PENDING:DH003 (CallNotPermittedException) | gateway received 0 more calls
req 4 -> PENDING:DH004 (CallNotPermittedException) | gateway received 0 more calls
req 5 -> PENDING:DH005 (CallNotPermittedException) | gateway received 0 more calls
req 6 -> PENDING:DH006 (CallNotPermittedException) | gateway received 0 more calls
req 7 -> PENDING:DH007 (CallNotPermittedException) | gateway received 0 more calls
req 8 -> PENDING:DH008 (CallNotPermittedException) | gateway received 0 more calls
   breaker: OPEN | failureRate 80.0% | failed 4 | notPermitted 6
`, c)
}

func TestABadOverrideStopsTheRun(t *testing.T) {
	var out bytes.Buffer
	err := run(&out, "application.yml", applicationYml,
		[]string{"RESILIENCE4J_BULKHEAD_INSTANCES_PAYMENT_MAXWAITDURATION=soon"}, &fakeGateway{})
	assert.EqualError(t, err, `env RESILIENCE4J_BULKHEAD_INSTANCES_PAYMENT_MAXWAITDURATION: resilience4j.bulkhead.instances.payment.maxWaitDuration: invalid duration "soon": use 100ms, 3s, PT3S or milliseconds`)
	assert.Empty(t, out.String())
}

func TestTheEmbeddedFileIsTheFixture(t *testing.T) {
	fixture, err := os.ReadFile("../../leveeconfig/testdata/application.yml")
	require.NoError(t, err)
	assert.Equal(t, string(fixture), string(applicationYml))
}

// The prod profile's document makes the breaker wait 5s (the scenario waits 5.2s before its
// probes); the indexed variables replace the file's retryExceptions whole, as in Spring.
func TestTheScenarioWithAProfileAndAnIndexedOverride(t *testing.T) {
	out := runScenario(t, []string{"SPRING_PROFILES_ACTIVE=prod",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0=demo.r4j.GatewayException",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_1=java.io.IOException"})
	assert.Contains(t, out, "profiles: prod\n")
	assert.Contains(t, out, "  waitDurationInOpenState: 5S  (application.yml:34)\n")
	assert.Contains(t, out, "  retryExceptions: demo.r4j.GatewayException, java.io.IOException  (env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0)\n")
	sc := scenario(out)
	assert.Equal(t, `--- D. wait 5.2s, then the gateway recovers
probe 1 -> PAID:OK1
   breaker: HALF_OPEN | failureRate -1.0% | failed 0 | notPermitted 0
probe 2 -> PAID:OK2
   breaker: CLOSED | failureRate -1.0% | failed 0 | notPermitted 0
probe 3 -> PAID:OK3
   breaker: CLOSED | failureRate -1.0% | failed 0 | notPermitted 0
`, sc[strings.Index(sc, "--- D."):])
}

// A directory of files, as a Spring Boot config location: application.yml and the prod
// profile's application-prod.properties, which the file itself activates, over it; an
// indexed variable replaces the retry's list.
func TestTheScenarioFromADirectoryWithAPropertiesProfile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/application.yml", append([]byte("spring.profiles.active: prod\n"), applicationYml...), 0o600))
	require.NoError(t, os.WriteFile(dir+"/application-prod.properties",
		[]byte("resilience4j.circuitbreaker.instances.payment.waitDurationInOpenState=4s\n"), 0o600))
	var out bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		require.NoError(t, run(&out, dir, nil, []string{"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0=demo.r4j.GatewayException"}, &fakeGateway{}))
	})
	assert.Contains(t, out.String(), "profiles: prod\n")
	assert.Contains(t, out.String(), "  waitDurationInOpenState: 4s  ("+dir+"/application-prod.properties:1)\n")
	assert.Contains(t, out.String(), "  retryExceptions: demo.r4j.GatewayException  (env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0)\n")
	assert.Contains(t, out.String(), "--- D. wait 4.2s, then the gateway recovers\n")
}
