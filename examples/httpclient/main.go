// Command httpclient calls a flaky pricing service on the loopback interface through
// leveehttp's Transport, and prints how each of its requests was answered and what the circuit
// breaker did.
//
//	go run ./examples/httpclient
//
// The service answers 30 % of requests with 503, 4 % with 429 and Retry-After: 1, lets 2 % hang,
// and goes down entirely for two seconds in the middle of the run; its fate for each request is
// drawn from a seeded source, so every run sends the same answers in the same order. The client
// makes 100 requests, one every 100ms, through Fallback(Retry(CircuitBreaker(TimeLimiter(call)))):
//
//   - a retry of 3 attempts, 20ms apart, or until a Retry-After has passed (capped at 200ms);
//   - a breaker over the last 20 attempts that opens at 60 % failures for 500ms (2 probes
//     decide whether it closes), and until the Retry-After's instant when a 429 asks for one
//     (leveehttp.OpenOnRetryAfter);
//   - a time limit of 50ms per attempt, which ends a hung request;
//   - a fallback that answers a cached price while the breaker is open.
//
// Each request ends live (a 200 from the service), answered by the fallback, or failed (the last
// 503 or 429, or a timeout, once the retry gave up). A last table sends one request with a
// 250ms deadline to a path that always answers 503, through a retry that respects the caller's
// deadline (the default) and one that ignores it (retry.Config.IgnoreCallerDeadline): the first
// hands back the last 503 at 200ms, the second sleeps into the deadline. A third table sends
// requests to two hosts, one answering 503, through one leveehttp.KeyedTransport holding a
// breaker per host: the failing host's breaker opens and refuses its requests, while the other
// host is answered throughout. The test runs the same program on a fake
// clock (testing/synctest) over an in-memory connection, where every figure is exact; a run on a
// busy machine can shift a request across the end of an open breaker and differ by a few.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

const (
	seed        = 3
	requests    = 100
	pace        = 100 * time.Millisecond // one request every pace
	outageStart = 4 * time.Second
	outageEnd   = 6 * time.Second
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	if _, err := run(os.Stdout, ln, &http.Transport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// report is what a run measured.
type report struct {
	Live, Fallback, Failed int
	Failures               map[string]int // failed requests by what the caller got
	Received, Hung         int            // at the service
	Answers                map[int]int    // the service's answers by status
	Transitions            []string       // the breaker's, "1.234s CLOSED->OPEN"
	Deadline               []deadlineRow  // the deadline table
	Hosts                  []hostRow      // the per-host table
}

// hostRow is one line of the per-host table: how the requests to one host ended through a
// KeyedTransport holding a breaker per host, and that breaker's state at the end.
type hostRow struct {
	Host                string
	OK, Failed, Refused int
	Breaker             circuitbreaker.State
}

// deadlineRow is one line of the deadline table: how a request with a 250ms deadline to a
// service answering 503 ended, with a retry that respects the deadline and one that ignores it.
type deadlineRow struct {
	Retry    string
	Outcome  string
	Attempts int
	Took     time.Duration
}

// run serves the flaky service on ln, sends the requests through next, prints what happened
// to w and returns it. It closes ln and next's idle connections.
func run(w io.Writer, ln net.Listener, next *http.Transport) (report, error) {
	start := time.Now()
	svc := newFlaky(seed, start)
	srv := &http.Server{Handler: svc}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		next.CloseIdleConnections()
		srv.Close()
		<-served
	}()

	rep := report{Failures: map[string]int{}}
	cb, err := circuitbreaker.New("pricing", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{
		SlidingWindowSize: 20, MinimumNumberOfCalls: 10, FailureRateThreshold: 60,
		WaitDurationInOpenState: 500 * time.Millisecond, PermittedNumberOfCallsInHalfOpenState: 2,
		TransitionOnResult: leveehttp.OpenOnRetryAfter,
	}))
	if err != nil {
		return rep, err
	}
	cb.Subscribe(func(e circuitbreaker.Event) {
		if e.Type == circuitbreaker.EventStateTransition {
			rep.Transitions = append(rep.Transitions, fmt.Sprintf("%v %v->%v",
				time.Since(start).Round(time.Millisecond), e.From, e.To))
		}
	})
	rt, err := retry.New("pricing", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: 20 * time.Millisecond}))
	if err != nil {
		return rep, err
	}
	tl, err := timelimiter.New("pricing", timelimiter.Config{TimeoutDuration: 50 * time.Millisecond})
	if err != nil {
		return rep, err
	}
	cached, err := fallback.New("pricing", fallback.OnError(circuitbreaker.ErrCallNotPermitted,
		func(context.Context, error) (*http.Response, error) {
			return &http.Response{
				StatusCode: http.StatusOK, Header: http.Header{"X-Fallback": {"cached"}},
				Body: io.NopCloser(strings.NewReader("price=1899")),
			}, nil
		}))
	if err != nil {
		return rep, err
	}
	p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb, TimeLimiter: tl}, cached)
	tr, err := leveehttp.NewTransport(next, p, leveehttp.Config{MaxRetryAfter: 200 * time.Millisecond})
	if err != nil {
		return rep, err
	}
	client := &http.Client{Transport: tr}
	url := "http://" + ln.Addr().String() + "/price"

	for i := range requests {
		time.Sleep(time.Until(start.Add(time.Duration(i) * pace)))
		resp, err := client.Get(url)
		switch {
		case err != nil:
			rep.Failed++
			rep.Failures[failure(err)]++
		case resp.Header.Get("X-Fallback") != "":
			rep.Fallback++
		case resp.StatusCode == http.StatusOK:
			rep.Live++
		default:
			rep.Failed++
			rep.Failures[resp.Status]++
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	rep.Received, rep.Hung, rep.Answers = svc.counts()
	if rep.Deadline, err = deadlineTable(next, "http://"+ln.Addr().String()+"/busy", svc); err != nil {
		return rep, err
	}
	if rep.Hosts, err = hostTable(next, ln.Addr().String()); err != nil {
		return rep, err
	}

	fmt.Fprintf(w, "%d requests: %d live, %d fallback, %d failed\n", requests, rep.Live, rep.Fallback, rep.Failed)
	for _, k := range []string{"503 Service Unavailable", "429 Too Many Requests", "timeout"} {
		if n := rep.Failures[k]; n > 0 {
			fmt.Fprintf(w, "  failed with %s: %d\n", k, n)
		}
	}
	fmt.Fprintf(w, "the service received %d requests: %d answered 200, %d 503, %d 429, %d hung\n", rep.Received,
		rep.Answers[http.StatusOK], rep.Answers[http.StatusServiceUnavailable], rep.Answers[http.StatusTooManyRequests], rep.Hung)
	fmt.Fprintln(w, "breaker transitions:")
	for _, t := range rep.Transitions {
		fmt.Fprintln(w, " ", t)
	}
	fmt.Fprintln(w, "a 250ms deadline, 5 attempts 100ms apart, a service answering 503:")
	for _, row := range rep.Deadline {
		fmt.Fprintf(w, "  %-22s %s after %d attempts in %v\n", row.Retry+":", row.Outcome, row.Attempts, row.Took)
	}
	fmt.Fprintf(w, "one client, a breaker per host, %d requests to each host:\n", hostRequests)
	for _, row := range rep.Hosts {
		fmt.Fprintf(w, "  %-13s %2d ok, %2d 503, %2d refused; breaker %v\n", row.Host+":", row.OK, row.Failed, row.Refused, row.Breaker)
	}
	return rep, nil
}

// hostRequests is the number of requests the per-host table sends to each host.
const hostRequests = 10

// hostTable sends hostRequests requests, in turns, to two hosts served at addr —
// stock.test, which answers 200, and ledger.test, which answers 503 — through one
// leveehttp.KeyedTransport keeping a breaker per host (over the last 4 calls, open at 50 %
// for a minute): ledger.test's breaker opens after its 4th failure and refuses its next 6
// requests, while stock.test's stays CLOSED and every request to it is answered.
func hostTable(next *http.Transport, addr string) ([]hostRow, error) {
	// Both names reach the one listener at addr, as two hosts behind one address would.
	tr := next.Clone()
	dial := next.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network, addr) }
	defer tr.CloseIdleConnections()

	cbc := leveehttp.CircuitBreakerConfig(circuitbreaker.Config{
		SlidingWindowSize: 4, MinimumNumberOfCalls: 4, FailureRateThreshold: 50, WaitDurationInOpenState: time.Minute,
	})
	kt, err := leveehttp.NewKeyedTransport(tr, func(host string) (levee.Patterns, error) {
		return levee.NewPatterns(host, levee.Configs{CircuitBreaker: &cbc})
	}, leveehttp.KeyedConfig{Keyed: keyed.Config{MaxKeys: 100}})
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: kt}
	rows := []hostRow{{Host: "stock.test"}, {Host: "ledger.test"}}
	for range hostRequests {
		for i := range rows {
			resp, err := client.Get("http://" + rows[i].Host + "/hosts")
			switch {
			case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
				rows[i].Refused++
			case err != nil:
				return nil, err
			default:
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					rows[i].OK++
				} else {
					rows[i].Failed++
				}
			}
		}
	}
	for i := range rows {
		ps, err := kt.Patterns(rows[i].Host)
		if err != nil {
			return nil, err
		}
		rows[i].Breaker = ps.CircuitBreaker.State()
	}
	return rows, nil
}

// deadlineTable sends one request with a 250ms deadline to url, which always answers 503,
// through a retry of 5 attempts 100ms apart that respects the caller's deadline (the default)
// and through one that ignores it: the first stops at 200ms, since a third retry would start
// at the deadline, and hands back the last 503; the second sleeps into the deadline and ends
// with context.DeadlineExceeded at 250ms.
func deadlineTable(next *http.Transport, url string, svc *flaky) ([]deadlineRow, error) {
	var rows []deadlineRow
	for _, tc := range []struct {
		name   string
		ignore bool
	}{{"respects the deadline", false}, {"ignores the deadline", true}} {
		rt, err := retry.New("busy", leveehttp.RetryConfig(retry.Config{
			MaxAttempts: 5, WaitDuration: 100 * time.Millisecond, IgnoreCallerDeadline: tc.ignore,
		}))
		if err != nil {
			return nil, err
		}
		tr, err := leveehttp.NewTransport(next, levee.Compose[*http.Response]().WithRetry(rt), leveehttp.Config{})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		before := svc.busyCount()
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Do(req)
		row := deadlineRow{Retry: tc.name, Took: time.Since(start).Round(10 * time.Millisecond)}
		cancel()
		row.Attempts = svc.busyCount() - before
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			row.Outcome = "context deadline exceeded"
		case err != nil:
			row.Outcome = err.Error()
		default:
			row.Outcome = resp.Status
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// failure names what a failed request ended with.
func failure(err error) string {
	if errors.Is(err, timelimiter.ErrTimeout) {
		return "timeout"
	}
	return err.Error()
}
