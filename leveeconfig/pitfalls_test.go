package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
)

// The defaults that bite are warned of on load, each with its level.
func TestDefaultsThatBite(t *testing.T) {
	c, err := load(t, `resilience4j:
  ratelimiter:
    instances:
      x:
        limitForPeriod: 2
  retry:
    instances:
      x:
        maxAttempts: 4
  circuitbreaker:
    instances:
      x:
        slidingWindowType: TIME_BASED
      y:
        slidingWindowSize: 10
      z:
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
`)
	require.NoError(t, err)
	want := []leveeconfig.Warning{
		{Source: leveeconfig.Source{File: "app.yml", Line: 5}, Path: "resilience4j.ratelimiter.instances.x.limitForPeriod", Level: leveeconfig.LikelyMistake,
			Msg: "limitRefreshPeriod is not set: Resilience4j's default cycle is 500ns, so 2 calls are permitted every 500ns; set limitRefreshPeriod (e.g. 1s)"},
		{Source: leveeconfig.Source{File: "app.yml", Line: 5}, Path: "resilience4j.ratelimiter.instances.x.limitForPeriod", Level: leveeconfig.Note,
			Msg: "timeoutDuration is not set: a call waits up to Resilience4j's default 5s for a permission"},
		{Source: leveeconfig.Source{File: "app.yml", Line: 9}, Path: "resilience4j.retry.instances.x.maxAttempts", Level: leveeconfig.Note,
			Msg: "waitDuration is not set: attempts are Resilience4j's default 500ms apart"},
		{Source: leveeconfig.Source{File: "app.yml", Line: 13}, Path: "resilience4j.circuitbreaker.instances.x.slidingWindowType", Level: leveeconfig.LikelyMistake,
			Msg: "minimumNumberOfCalls is not set: a TIME_BASED window needs Resilience4j's default 100 calls within it before any failure rate; set minimumNumberOfCalls"},
		{Source: leveeconfig.Source{File: "app.yml", Line: 15}, Path: "resilience4j.circuitbreaker.instances.y.slidingWindowSize", Level: leveeconfig.Note,
			Msg: "minimumNumberOfCalls is not set: Resilience4j's default 100 is capped to the window, so the failure rate needs 10 calls"},
	}
	assert.Equal(t, want, c.Warnings)
	assert.Equal(t, "likely mistake", leveeconfig.LikelyMistake.String())
	assert.Equal(t, "note", leveeconfig.Note.String())
}
