package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The program on a fake clock, over an in-memory connection: the service's seeded answers and
// the client's pace make every figure exact.
func TestRunFigures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := leveetest.NewPipeListenerNamed("pricing.test")
		var out bytes.Buffer
		rep, err := run(&out, ln, &http.Transport{DialContext: ln.Dial})
		require.NoError(t, err)

		assert.Equal(t, requests, rep.Live+rep.Fallback+rep.Failed)
		assert.Equal(t, rep.Received, rep.Answers[200]+rep.Answers[503]+rep.Answers[429]+rep.Hung)
		assert.Equal(t, rep.Live, rep.Answers[200], "every 200 reached its caller")

		assert.Equal(t, 78, rep.Live)
		assert.Equal(t, 18, rep.Fallback)
		assert.Equal(t, 4, rep.Failed)
		assert.Equal(t, map[string]int{"503 Service Unavailable": 4}, rep.Failures)
		assert.Equal(t, 129, rep.Received)
		assert.Equal(t, 3, rep.Hung)
		assert.Equal(t, map[int]int{200: 78, 503: 42, 429: 6}, rep.Answers)
		assert.Equal(t, []string{
			"720ms CLOSED->OPEN", // a 429's Retry-After, capped at 200ms
			"920ms OPEN->HALF_OPEN",
			"920ms HALF_OPEN->CLOSED",
			"2.32s CLOSED->OPEN",
			"2.52s OPEN->HALF_OPEN",
			"2.52s HALF_OPEN->CLOSED",
			"2.52s CLOSED->OPEN", // a probe answered 429 reopens the CLOSED period it closed into
			"2.72s OPEN->HALF_OPEN",
			"2.74s HALF_OPEN->CLOSED",
			"4.3s CLOSED->OPEN", // the outage: 60 % of the last 20 attempts failed
			"4.9s OPEN->HALF_OPEN",
			"4.92s HALF_OPEN->OPEN",
			"5.5s OPEN->HALF_OPEN",
			"5.52s HALF_OPEN->OPEN",
			"6.1s OPEN->HALF_OPEN",
			"6.2s HALF_OPEN->CLOSED", // the outage is over
			"8s CLOSED->OPEN",
			"8.2s OPEN->HALF_OPEN",
			"8.2s HALF_OPEN->CLOSED",
			"8.2s CLOSED->OPEN",
			"8.4s OPEN->HALF_OPEN",
			"8.6s HALF_OPEN->CLOSED",
		}, rep.Transitions)
		assert.Equal(t, []deadlineRow{
			{Retry: "respects the deadline", Outcome: "503 Service Unavailable", Attempts: 3, Took: 200 * time.Millisecond},
			{Retry: "ignores the deadline", Outcome: "context deadline exceeded", Attempts: 3, Took: 250 * time.Millisecond},
		}, rep.Deadline)
		assert.Equal(t, []hostRow{
			{Host: "stock.test", OK: 10, Breaker: circuitbreaker.Closed},
			{Host: "ledger.test", Failed: 4, Refused: 6, Breaker: circuitbreaker.Open},
		}, rep.Hosts)
		assert.True(t, strings.HasSuffix(out.String(), `a 250ms deadline, 5 attempts 100ms apart, a service answering 503:
  respects the deadline: 503 Service Unavailable after 3 attempts in 200ms
  ignores the deadline:  context deadline exceeded after 3 attempts in 250ms
one client, a breaker per host, 10 requests to each host:
  stock.test:   10 ok,  0 503,  0 refused; breaker CLOSED
  ledger.test:   0 ok,  4 503,  6 refused; breaker OPEN
`), out.String())
		assert.Equal(t, `100 requests: 78 live, 18 fallback, 4 failed
  failed with 503 Service Unavailable: 4
the service received 129 requests: 78 answered 200, 42 503, 6 429, 3 hung
breaker transitions:
`, out.String()[:strings.Index(out.String(), "  720ms")])
	})
}
