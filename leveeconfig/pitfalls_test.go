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

// Every pitfall, one instance each: its warning, its level, at the key that bites; with the
// partner key set, no warning.
func TestEveryPitfallWarnsAtItsLevel(t *testing.T) {
	const (
		note    = leveeconfig.Note
		mistake = leveeconfig.LikelyMistake
	)
	for _, tc := range []struct {
		section, keys string
		line          int
		key           string
		level         leveeconfig.Level
		msg           string
		partnered     string // the same keys with the partner set: no warning
	}{
		{"ratelimiter", "limitForPeriod: 2\n        timeoutDuration: 0", 5, "limitForPeriod", mistake,
			"limitRefreshPeriod is not set: Resilience4j's default cycle is 500ns, so 2 calls are permitted every 500ns; set limitRefreshPeriod (e.g. 1s)",
			"limitForPeriod: 2\n        timeoutDuration: 0\n        limitRefreshPeriod: 1s"},
		{"ratelimiter", "limitForPeriod: 2\n        limitRefreshPeriod: 1s", 5, "limitForPeriod", note,
			"timeoutDuration is not set: a call waits up to Resilience4j's default 5s for a permission",
			"limitForPeriod: 2\n        limitRefreshPeriod: 1s\n        timeoutDuration: 100ms"},
		{"retry", "maxAttempts: 4", 5, "maxAttempts", note,
			"waitDuration is not set: attempts are Resilience4j's default 500ms apart",
			"maxAttempts: 4\n        waitDuration: 10ms"},
		{"circuitbreaker", "slidingWindowType: TIME_BASED", 5, "slidingWindowType", mistake,
			"minimumNumberOfCalls is not set: a TIME_BASED window needs Resilience4j's default 100 calls within it before any failure rate; set minimumNumberOfCalls",
			"slidingWindowType: TIME_BASED\n        minimumNumberOfCalls: 10"},
		{"circuitbreaker", "slidingWindowSize: 10", 5, "slidingWindowSize", note,
			"minimumNumberOfCalls is not set: Resilience4j's default 100 is capped to the window, so the failure rate needs 10 calls",
			"slidingWindowSize: 10\n        minimumNumberOfCalls: 5"},
		{"circuitbreaker", "slidingWindowSize: 10\n        minimumNumberOfCalls: 20", 6, "minimumNumberOfCalls", mistake,
			"20 is more than slidingWindowSize (app.yml:5) 10: a COUNT_BASED window holds 10 calls at most, so Resilience4j caps minimumNumberOfCalls to 10",
			"slidingWindowSize: 20\n        minimumNumberOfCalls: 20"},
		{"circuitbreaker", "minimumNumberOfCalls: 150", 5, "minimumNumberOfCalls", mistake,
			"150 is more than Resilience4j's default slidingWindowSize 100: a COUNT_BASED window holds 100 calls at most, so Resilience4j caps minimumNumberOfCalls to 100",
			"minimumNumberOfCalls: 150\n        slidingWindowType: TIME_BASED"},
		{"circuitbreaker", "slowCallRateThreshold: 50", 5, "slowCallRateThreshold", mistake,
			"slowCallDurationThreshold is not set: only calls slower than Resilience4j's default 60s are slow; set slowCallDurationThreshold",
			"slowCallRateThreshold: 50\n        slowCallDurationThreshold: 2s"},
		{"circuitbreaker", "slowCallDurationThreshold: 2s", 5, "slowCallDurationThreshold", note,
			"slowCallRateThreshold is not set: Resilience4j's default 100 opens the breaker only when every call of the window is slow",
			"slowCallDurationThreshold: 2s\n        slowCallRateThreshold: 50"},
		{"timelimiter", "cancelRunningFuture: false", 4, "", note,
			"timeoutDuration is not set: calls time out after Resilience4j's default 1s",
			"cancelRunningFuture: false\n        timeoutDuration: 3s"},
		{"bulkhead", "maxConcurrentCalls: 5", 5, "maxConcurrentCalls", note,
			"maxWaitDuration is not set: a call finding maxConcurrentCalls in flight is refused at once (Resilience4j's default 0); set maxWaitDuration to let it wait",
			"maxConcurrentCalls: 5\n        maxWaitDuration: 0"},
		{"retry", "exponentialBackoffMultiplier: 3", 5, "exponentialBackoffMultiplier", mistake,
			"ignored without enableExponentialBackoff: true, as in Resilience4j",
			"exponentialBackoffMultiplier: 3\n        enableExponentialBackoff: true\n        waitDuration: 10ms"},
		{"circuitbreaker", "randomizedWaitFactor: 0.2\n        waitDurationInOpenState: 1s", 5, "randomizedWaitFactor", mistake,
			"ignored without enableRandomizedWait: true, as in Resilience4j",
			"randomizedWaitFactor: 0.2\n        waitDurationInOpenState: 1s\n        enableRandomizedWait: true"},
	} {
		c, err := load(t, instance(tc.section, tc.keys))
		require.NoError(t, err, tc.keys)
		path := "resilience4j." + tc.section + ".instances.x"
		if tc.key != "" {
			path += "." + tc.key
		}
		assert.Equal(t, []leveeconfig.Warning{{Source: leveeconfig.Source{File: "app.yml", Line: tc.line}, Path: path, Level: tc.level, Msg: tc.msg}},
			c.Warnings, tc.keys)
		c, err = load(t, instance(tc.section, tc.partnered))
		require.NoError(t, err, tc.partnered)
		assert.Empty(t, c.Warnings, tc.partnered)
	}
}
