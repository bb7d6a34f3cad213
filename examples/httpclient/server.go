package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// flaky is the pricing service the client calls. Its path /busy always answers 503. Each request it receives draws its fate from a
// seeded source, in arrival order: 30 % answer 503, 4 % answer 429 with Retry-After: 1, 2 % hang
// until the client gives up, the rest answer 200 with a price. Between outageStart and
// outageEnd after start it answers 503 to everything, an outage for the breaker to see.
type flaky struct {
	start time.Time

	mu       sync.Mutex
	rnd      *rand.Rand
	received int // requests that reached the handler
	answers  map[int]int
	hung     int // requests that hung until their client gave up
	busy     int // requests to /busy
}

func newFlaky(seed uint64, start time.Time) *flaky {
	return &flaky{start: start, rnd: rand.New(rand.NewPCG(seed, 0)), answers: map[int]int{}}
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/hosts" { // the per-host table: ledger.test is down, stock.test is up
		if r.Host == "ledger.test" {
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "in stock")
		return
	}
	if r.URL.Path == "/busy" { // always 503, for the deadline table; counted apart
		f.mu.Lock()
		f.busy++
		f.mu.Unlock()
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	}
	f.mu.Lock()
	f.received++
	since := time.Since(f.start)
	u := f.rnd.Float64()
	f.mu.Unlock()

	status := http.StatusOK
	switch {
	case since >= outageStart && since < outageEnd:
		status = http.StatusServiceUnavailable
	case u < 0.30:
		status = http.StatusServiceUnavailable
	case u < 0.34:
		status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
	case u < 0.36:
		<-r.Context().Done() // hang: the client's time limiter ends it
		f.mu.Lock()
		f.hung++
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	f.answers[status]++
	f.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	fmt.Fprint(w, "price=1999")
}

// counts returns what the server saw.
func (f *flaky) counts() (received, hung int, answers map[int]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answers = make(map[int]int, len(f.answers))
	for k, v := range f.answers {
		answers[k] = v
	}
	return f.received, f.hung, answers
}

// busyCount returns the number of requests to /busy so far.
func (f *flaky) busyCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busy
}
