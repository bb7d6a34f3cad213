// Command overload runs a service on the loopback interface under three times the load it can
// serve, from two tenants at three priorities, and prints every second what it admitted and
// shed for each.
//
//	go run ./examples/overload
//
// The service's work answers in 20 ms up to 8 requests at once and slows in proportion past
// that (20 ms × n / 8), so it serves about 400 requests a second. The client sends 1,200 a
// second for 5 s: two thirds from the tenant "globex", one third from "acme"; 10 % critical,
// 60 % normal, 30 % sheddable, the tenant in X-Tenant. The priority travels as levee's
// adapters carry it: the client puts it in each request's context (priority.WithPriority),
// leveehttp's Transport sends it in the Levee-Priority header, and leveehttp's Middleware
// puts it back in the context of the service's handler. The service guards its work with two
// layers:
//
//   - an adaptive.PartitionedLimiter with a partition per tenant, each guaranteed half of 20
//     requests inside the service: globex, the noisy one, borrows what acme leaves idle and
//     no more; critical requests bypass it;
//   - an adaptive.Prioritizer in front of an adaptive.Limiter with a queue: when requests
//     start to queue, the lowest levels are shed first; critical ones never are.
//
// A shed request gets 503 at once. Each line of the output is one second: per tenant and
// priority, the requests admitted and shed. The test runs the same program on a fake clock
// (testing/synctest) over in-memory connections.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/priority"
)

const (
	base     = 20 * time.Millisecond
	knee     = 8
	rate     = 1200 // requests a second, 3× the 400 the work serves
	duration = 5 * time.Second
	// tenantLimit bounds the requests of both tenants inside the service, queued ones
	// included: the work's limit and its queue, with room to spare.
	tenantLimit = 20
)

var (
	tenants    = []string{"acme", "globex"}
	priorities = []priority.Priority{priority.Critical, priority.Normal, priority.Sheddable}
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 1000}
	if _, err := run(os.Stdout, ln, tr, "http://"+ln.Addr().String()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// counts are the requests of one tenant at one priority.
type counts struct{ Admitted, Shed int }

// cell indexes counts by tenant and priority.
type cell struct {
	Tenant   string
	Priority priority.Priority
}

// report is what a run counted at the service, in all and per second.
type report struct {
	Total     map[cell]counts
	PerSecond []map[cell]counts
}

// service is the guarded work.
type service struct {
	tenants *adaptive.PartitionedLimiter
	limiter *adaptive.Limiter
	prio    *adaptive.Prioritizer
	start   time.Time

	mu       sync.Mutex
	inFlight int
	rep      report
}

func newService(start time.Time) (*service, error) {
	parts, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{
		Config:     adaptive.Config{InitialLimit: tenantLimit, MinLimit: tenantLimit, MaxLimit: tenantLimit},
		Partitions: []adaptive.Partition{{Name: "acme", Share: 0.5}, {Name: "globex", Share: 0.5}},
	})
	if err != nil {
		return nil, err
	}
	l, err := adaptive.New("work", adaptive.Config{MaxQueued: 100, MaxWaitDuration: time.Second})
	if err != nil {
		return nil, err
	}
	p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: 100 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	p.Register(l)
	return &service{tenants: parts, limiter: l, prio: p, start: start, rep: report{Total: map[cell]counts{}}}, nil
}

// ServeHTTP reads the tenant from its header (the priority is in the request's context, put
// there by leveehttp's Middleware), then runs the work under both layers: the tenant's share,
// then the prioritizer and its limiter.
func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	tenant := r.Header.Get("X-Tenant")
	ctx := adaptive.WithPartition(r.Context(), tenant)
	c := cell{tenant, priority.FromContext(ctx)}
	arrived := time.Now()
	prioritized := func(ctx context.Context) (struct{}, error) {
		return adaptive.ExecutePrioritized(ctx, s.prio, s.limiter, s.work)
	}
	if c.Priority == priority.Critical {
		// Critical requests bypass the tenants' shares, as Netflix's bypass resolver lets
		// health checks through: a share must never shed what the prioritizer keeps.
		_, err = prioritized(ctx)
	} else {
		_, err = adaptive.ExecutePartitioned(ctx, s.tenants, prioritized)
	}
	s.count(arrived, c, err == nil)
	if errors.Is(err, adaptive.ErrLimitExceeded) {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// work answers in base up to knee requests at once, and base × n / knee past it.
func (s *service) work(context.Context) (struct{}, error) {
	s.mu.Lock()
	s.inFlight++
	n := s.inFlight
	s.mu.Unlock()
	d := base
	if n > knee {
		d = base * time.Duration(n) / knee
	}
	time.Sleep(d)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return struct{}{}, nil
}

// count counts a request that arrived at arrived, by the second of its arrival.
func (s *service) count(arrived time.Time, c cell, admitted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := int(arrived.Sub(s.start) / time.Second)
	for len(s.rep.PerSecond) <= sec {
		s.rep.PerSecond = append(s.rep.PerSecond, map[cell]counts{})
	}
	t, ps := s.rep.Total[c], s.rep.PerSecond[sec][c]
	if admitted {
		t.Admitted++
		ps.Admitted++
	} else {
		t.Shed++
		ps.Shed++
	}
	s.rep.Total[c], s.rep.PerSecond[sec][c] = t, ps
}

// request is the i-th request of the client: its tenant and priority.
func request(i int) (tenant string, p priority.Priority) {
	tenant = "globex"
	if i%3 == 0 {
		tenant = "acme"
	}
	switch i % 10 {
	case 0:
		p = priority.Critical
	case 1, 2, 3:
		p = priority.Sheddable
	default:
		p = priority.Normal
	}
	return tenant, p
}

// run serves on ln, sends the load to url through tr, prints a line per second to w and
// returns the counts. It closes ln and tr's idle connections.
func run(w io.Writer, ln net.Listener, tr *http.Transport, url string) (report, error) {
	start := time.Now()
	svc, err := newService(start)
	if err != nil {
		return report{}, err
	}
	// The Middleware reads the Levee-Priority header (ServerConfig.PriorityHeader's default);
	// the Transport, with no pipeline of its own here, sends it from each request's context.
	mw, err := leveehttp.Middleware(leveehttp.ServerConfig{})
	if err != nil {
		return report{}, err
	}
	lt, err := leveehttp.NewTransport(tr, nil, leveehttp.Config{})
	if err != nil {
		return report{}, err
	}
	srv := &http.Server{Handler: mw(svc)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	client := &http.Client{Transport: lt}

	var wg sync.WaitGroup
	var failMu sync.Mutex
	var failure error
	pace := time.Second / rate
	for i := range rate * int(duration/time.Second) {
		tenant, p := request(i)
		wg.Go(func() {
			ctx := priority.WithPriority(context.Background(), p)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/work", nil)
			if err == nil {
				req.Header.Set("X-Tenant", tenant)
				var resp *http.Response
				if resp, err = client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			}
			if err != nil {
				failMu.Lock()
				failure = errors.Join(failure, err)
				failMu.Unlock()
			}
		})
		// Paced from the start, not from the last request, so that a slow machine keeps the
		// rate (sending the late ones at once).
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * pace)))
	}
	wg.Wait()
	_ = srv.Shutdown(context.Background())
	tr.CloseIdleConnections()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return report{}, err
	}
	if failure != nil {
		return report{}, failure
	}
	svc.mu.Lock()
	rep := svc.rep
	svc.mu.Unlock()
	print(w, rep)
	return rep, nil
}

func print(w io.Writer, rep report) {
	fmt.Fprintf(w, "%-4s", "sec")
	for _, t := range tenants {
		for _, p := range priorities {
			fmt.Fprintf(w, " %18s", t+" "+p.String())
		}
	}
	fmt.Fprintln(w, "   (admitted/shed)")
	line := func(label string, m map[cell]counts) {
		fmt.Fprintf(w, "%-4s", label)
		for _, t := range tenants {
			for _, p := range priorities {
				c := m[cell{t, p}]
				fmt.Fprintf(w, " %18s", fmt.Sprintf("%d/%d", c.Admitted, c.Shed))
			}
		}
		fmt.Fprintln(w)
	}
	for i, m := range rep.PerSecond {
		line(fmt.Sprint(i+1), m)
	}
	line("all", rep.Total)
}
