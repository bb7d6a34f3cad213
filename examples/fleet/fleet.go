package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/leveeredis"
)

// The limit the fleet shares, and the fleet.
const (
	limit    = 50
	replicas = 4
	workers  = 4 // goroutines calling the gateway in each replica
)

// Environment of a replica process.
const (
	envReplica = "FLEET_REPLICA"
	envRedis   = "FLEET_REDIS"
	envGateway = "FLEET_GATEWAY"
	envStart   = "FLEET_START" // Unix second at which the replica starts calling
	envEnd     = "FLEET_END"   // Unix second at which it stops
)

// schedule is the run, in whole seconds from its start: Redis is killed shortly before second
// KillAt and started again at RestartAt; the run ends at End.
type schedule struct {
	KillAt, RestartAt, End int
}

// defaultSchedule: 4s with Redis, 3s without, 5s with it again.
var defaultSchedule = schedule{KillAt: 4, RestartAt: 7, End: 12}

// Phase of a second of the run.
type phase string

const (
	phaseUp         phase = "redis"      // Redis ran the whole second and the one before
	phaseDown       phase = "down"       // Redis was down the whole second and the one before
	phaseTransition phase = "transition" // Redis went away or came back in this second or the one before (or, for its return, the one before that)
	phaseMissed     phase = "missed"     // Redis ran, but a replica's check missed StoreTimeout
)

// second is one line of the report.
type second struct {
	Index    int
	Phase    phase
	Admitted [replicas]int
	Total    int
}

// replicaReport is what a replica prints when it ends: its admitted calls per Unix second.
type replicaReport struct {
	Replica  int           `json:"replica"`
	Admitted map[int64]int `json:"admitted"`
	// Degraded holds the seconds in which, or next to which, the replica admitted a call
	// through its local share or a check of its missed StoreTimeout (refused, or failed).
	Degraded map[int64]bool     `json:"degraded"`
	Share    int                `json:"share"`
	Metrics  leveeredis.Metrics `json:"metrics"`
}

// run starts Redis, the gateway and the replicas, follows the schedule and writes the report.
func run(ctx context.Context, w io.Writer, sch schedule) ([]second, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not on PATH (apt-get install -y redis-server): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	srv := &redisProcess{bin: bin, port: port}
	if err := srv.start(ctx); err != nil {
		return nil, err
	}
	defer srv.kill()

	gw, err := payment.Start()
	if err != nil {
		return nil, err
	}
	defer func() { _ = gw.Close() }()

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	start := time.Now().Truncate(time.Second).Add(3 * time.Second) // time for the replicas to start and warm up
	end := start.Add(time.Duration(sch.End) * time.Second)
	reports := make([]replicaReport, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		cmd := exec.CommandContext(ctx, self, "-test.run=^$") // a test binary runs no test, see main_test.go
		cmd.Env = append(os.Environ(),
			envReplica+"="+strconv.Itoa(i+1),
			envRedis+"="+srv.addr(),
			envGateway+"="+gw.URL(),
			envStart+"="+strconv.FormatInt(start.Unix(), 10),
			envEnd+"="+strconv.FormatInt(end.Unix(), 10))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		wg.Go(func() {
			if err := json.NewDecoder(out).Decode(&reports[i]); err != nil {
				errs[i] = fmt.Errorf("replica %d: %w", i+1, err)
			}
			_, _ = io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil && errs[i] == nil {
				errs[i] = fmt.Errorf("replica %d: %w", i+1, err)
			}
		})
	}

	// Redis goes away 100ms before second KillAt and comes back at RestartAt.
	killAt := start.Add(time.Duration(sch.KillAt)*time.Second - 100*time.Millisecond)
	restartAt := start.Add(time.Duration(sch.RestartAt) * time.Second)
	sleepUntil(ctx, killAt)
	srv.kill()
	fmt.Fprintf(w, "-- redis killed at +%.1fs\n", killAt.Sub(start).Seconds())
	sleepUntil(ctx, restartAt)
	if err := srv.start(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "-- redis restarted at +%.1fs on the same port\n", time.Since(start).Seconds())
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var out []second
	for s := range sch.End {
		sec := second{Index: s, Phase: phaseUp}
		switch {
		// The second after the kill still holds the local limiter's cycle that was in progress
		// (its cycles count from its own start, not from whole seconds); the second after the
		// restart holds replicas whose store breaker has not let them back to Redis yet, and
		// the one after that the reservations made while some replicas still decided alone
		// (Redis held their shares back) and the local shares' reservations reported as debt:
		// it may admit less than the limit.
		case s == sch.KillAt-1 || s == sch.KillAt || s == sch.RestartAt || s == sch.RestartAt+1 || s == sch.RestartAt+2:
			sec.Phase = phaseTransition
		case s > sch.KillAt && s < sch.RestartAt:
			sec.Phase = phaseDown
		}
		for i, r := range reports {
			sec.Admitted[i] = r.Admitted[start.Unix()+int64(s)]
			sec.Total += sec.Admitted[i]
			if sec.Phase == phaseUp && r.Degraded[start.Unix()+int64(s)] {
				sec.Phase = phaseMissed
			}
		}
		out = append(out, sec)
	}
	writeReport(w, out, reports)
	return out, nil
}

func writeReport(w io.Writer, secs []second, reports []replicaReport) {
	fmt.Fprintf(w, "limit %d calls/s shared by %d replicas; share while Redis is down: %d calls/s each\n",
		limit, replicas, reports[0].Share)
	var b strings.Builder
	b.WriteString("second")
	for i := range replicas {
		fmt.Fprintf(&b, "  r%d", i+1)
	}
	b.WriteString("  total  redis\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "%6d", s.Index)
		for _, a := range s.Admitted {
			fmt.Fprintf(&b, "  %2d", a)
		}
		fmt.Fprintf(&b, "  %5d  %s\n", s.Total, s.Phase)
	}
	_, _ = io.WriteString(w, b.String())
	for _, r := range reports {
		m := r.Metrics
		fmt.Fprintf(w, "r%d: admitted by Redis %d, by the local share %d (refused %d); Redis unavailable for %d checks, %d episodes\n",
			r.Replica, m.Permitted, m.LocalPermitted, m.Refused+m.LocalRefused, m.StoreFailures+m.BreakerRejections, m.Episodes)
	}
}

// replica is the body of a replica process: it calls the gateway from many goroutines through
// the shared limiter until the end of the run, then prints its report as JSON.
func replica() error {
	id, _ := strconv.Atoi(os.Getenv(envReplica))
	startSec, err1 := strconv.ParseInt(os.Getenv(envStart), 10, 64)
	endSec, err2 := strconv.ParseInt(os.Getenv(envEnd), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	redis.SetLogger(quiet{}) // go-redis logs every failed dial while Redis is down
	client := redis.NewClient(&redis.Options{
		Addr:                  os.Getenv(envRedis),
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialTimeout:           200 * time.Millisecond,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		PoolTimeout:           250 * time.Millisecond,
		MinIdleConns:          workers, // dialled ahead: the first checks do not pay for it
	})
	defer func() { _ = client.Close() }()
	rl, err := leveeredis.NewRateLimiter(client, "payment", leveeredis.Config{
		LimitForPeriod:     limit,
		LimitRefreshPeriod: time.Second,
		TimeoutDuration:    time.Second,
		HeartbeatInterval:  100 * time.Millisecond,
		ReplicaID:          "replica-" + strconv.Itoa(id),
		// Five processes share this machine's cores with Redis: allow a check 100ms rather
		// than the default 20ms, so that a scheduling delay is not taken for an outage.
		StoreTimeout: 100 * time.Millisecond,
		StoreCircuitBreaker: &circuitbreaker.Config{
			FailureRateThreshold: 50, SlidingWindowSize: 10, MinimumNumberOfCalls: 5,
			WaitDurationInOpenState: 250 * time.Millisecond, PermittedNumberOfCallsInHalfOpenState: 2,
		},
	})
	if err != nil {
		return err
	}
	defer func() { _ = rl.Close() }()
	for range 5 { // the limiter works without it; a loaded machine may need a second try
		if rl.Warm(context.Background()) == nil {
			break
		}
	}
	gw := payment.NewClient(os.Getenv(envGateway))
	defer gw.Close()

	start, end := time.Unix(startSec, 0), time.Unix(endSec, 0)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	// Calls begin one second before the report does: that second warms the processes up
	// (connections, scripts, goroutines), whose first checks may otherwise miss StoreTimeout.
	sleepUntil(ctx, start.Add(-time.Second))
	var mu sync.Mutex
	admitted := map[int64]int{}
	degraded := map[int64]bool{}
	var wg sync.WaitGroup
	// Every 50ms, note whether the local share admitted anything, or a check missed
	// StoreTimeout, since the last look, and mark the seconds those may have fallen in.
	missed := func() uint64 { m := rl.Metrics(); return m.LocalPermitted + m.StoreFailures + m.StoreRefused }
	wg.Go(func() {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		last := missed()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-ticker.C:
				if n := missed(); n != last {
					last = n
					mu.Lock()
					degraded[now.Add(-60*time.Millisecond).Unix()] = true
					degraded[now.Unix()] = true
					mu.Unlock()
				}
			}
		}
	})
	for g := range workers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				_, err := leveeredis.ExecuteRateLimiter(ctx, rl, func(ctx context.Context) (string, error) {
					now := time.Now()
					if !now.Before(start) && now.Before(end) {
						mu.Lock()
						admitted[now.Unix()]++
						mu.Unlock()
					}
					return gw.Charge(ctx, fmt.Sprintf("r%d-g%d-%d", id, g, n))
				})
				if err != nil && ctx.Err() == nil {
					time.Sleep(20 * time.Millisecond) // refused: try again a little later
				}
			}
		})
	}
	wg.Wait()
	return json.NewEncoder(os.Stdout).Encode(replicaReport{
		Replica: id, Admitted: admitted, Degraded: degraded, Share: rl.Metrics().FallbackLimitForPeriod, Metrics: rl.Metrics(),
	})
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// redisProcess is a redis-server on a loopback port.
type redisProcess struct {
	bin  string
	port int
	cmd  *exec.Cmd
}

func (r *redisProcess) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

func (r *redisProcess) start(ctx context.Context) error {
	r.cmd = exec.Command(r.bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port),
		"--save", "", "--appendonly", "no")
	if err := r.cmd.Start(); err != nil {
		return err
	}
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(5 * time.Second)
	for c.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.kill()
			return errors.New("redis-server did not answer PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (r *redisProcess) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
