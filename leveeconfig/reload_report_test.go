package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// ReloadReport lists what the reload applied beside what it could not; an instance that an
// environment variable alone declares is reported as the file's are.
func TestReloadReportsWhatItApplied(t *testing.T) {
	c, err := load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
  ratelimiter:
    instances:
      api:
        limitForPeriod: 5
        limitRefreshPeriod: 1s
        timeoutDuration: 0
`)
	require.NoError(t, err)
	reg := registry.New()
	require.NoError(t, c.Apply(reg))

	next, err := load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 20
        minimumNumberOfCalls: 10
  ratelimiter:
    instances:
      api:
        limitForPeriod: 8
        limitRefreshPeriod: 2s
        timeoutDuration: 0
`, "RESILIENCE4J_BULKHEAD_INSTANCES_AUDIT_MAXCONCURRENTCALLS=4")
	require.NoError(t, err)
	rep, err := c.ReloadReport(reg, next)
	require.NoError(t, err)
	var applied, unchanged []string
	for _, ch := range rep.Applied {
		applied = append(applied, ch.String())
	}
	for _, u := range rep.Unchanged {
		unchanged = append(unchanged, u.String())
	}
	assert.Equal(t, []string{
		"circuitbreaker payment slidingWindowSize 10 -> 20 (app.yml:5)",
		"bulkhead audit created (env RESILIENCE4J_BULKHEAD_INSTANCES_AUDIT_MAXCONCURRENTCALLS)",
		"ratelimiter api limitForPeriod 5 -> 8 (app.yml:10)",
	}, applied)
	require.Len(t, unchanged, 1)
	assert.Equal(t, leveeconfig.Unchanged{Pattern: registry.RateLimiter, Name: "api", Key: "limitRefreshPeriod", From: "1s", To: "2s",
		Reason: rep.Unchanged[0].Reason}, rep.Unchanged[0])
	b, ok := reg.FindBulkhead("audit")
	require.True(t, ok, "the environment's instance is created")
	assert.Equal(t, 4, b.Config().MaxConcurrentCalls)
	cb, _ := reg.FindCircuitBreaker("payment")
	assert.Equal(t, 20, cb.Config().SlidingWindowSize)
}
