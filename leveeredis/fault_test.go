package leveeredis_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/integration"
	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

// The fault run: three replica processes × 8 goroutines share one limit with the defaults
// (FallbackToLocal, StoreTimeout 20ms), reaching a real redis-server through a toxiproxy that
// delays every answer on one connection in five by 30ms (a check on it overruns StoreTimeout, and go-redis replaces the connection), while
// stress-ng burns the CPU. Within the 20 seconds Redis is killed (and restarted empty), frozen
// with SIGSTOP and stalled with CLIENT PAUSE, 3 seconds each. Every replica logs the interval
// in which each of its calls was admitted, and the test counts them per cycle from these logs.

const (
	faultLimit    = 40
	faultPeriod   = time.Second
	faultSeconds  = 20
	faultReplicas = 3
	faultWorkers  = 8
	faultRoleEnv  = "LEVEE_FAULT_ROLE"
)

// faultChild runs a child role of the fault run and returns the process's exit code, or -1
// when this process is not a child.
func faultChild() int {
	switch os.Getenv(faultRoleEnv) {
	case "":
		return -1
	case "proxy":
		return faultProxy()
	case "replica":
		return faultReplica()
	}
	return 2
}

// faultProxy listens on LEVEE_FAULT_LISTEN, forwards to LEVEE_FAULT_UPSTREAM and delays
// Redis's answers by 30ms on a fifth of the connections (toxiproxy's toxicity is per
// connection), until killed.
func faultProxy() int {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	proxy := toxiproxy.NewProxy(srv, "redis", os.Getenv("LEVEE_FAULT_LISTEN"), os.Getenv("LEVEE_FAULT_UPSTREAM"))
	if err := proxy.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(
		`{"name":"slow","type":"latency","stream":"downstream","toxicity":0.2,"attributes":{"latency":30,"jitter":0}}`)); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	fmt.Println("ready")
	select {}
}

// faultLog is what a replica prints when it ends.
type faultLog struct {
	// Admitted holds, for each admitted call, the instants (µs since the Unix epoch) before
	// and after AcquirePermission (the permission was decided in between), and 1 when the
	// local share granted it, 0 when Redis did.
	Admitted [][3]int64
	Offered  int
	Metrics  leveeredis.Metrics
}

// localKey keys the flag a local grant sets in the request's context.
type localKey struct{}

func faultReplica() int {
	leveeredis.SetLocalGrantHook(func(ctx context.Context) {
		if p, ok := ctx.Value(localKey{}).(*int64); ok {
			*p = 1
		}
	})
	c := redis.NewClient(&redis.Options{
		Addr: os.Getenv("LEVEE_FAULT_ADDR"), MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: 50 * time.Millisecond, ReadTimeout: 50 * time.Millisecond,
		WriteTimeout: 50 * time.Millisecond, PoolTimeout: 60 * time.Millisecond,
		MinIdleConns: 4, DisableIdentity: true, // a timed-out check closes its connection
	})
	defer func() { _ = c.Close() }()
	rl, err := leveeredis.NewRateLimiter(c, "fault", leveeredis.Config{
		LimitForPeriod: faultLimit, LimitRefreshPeriod: faultPeriod, TimeoutDuration: ratelimiter.NoWait,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	for range 50 { // as a service would at start-up; a slow answer is tried again
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rl.Warm(ctx)
		cancel()
		if err == nil {
			break
		}
	}
	start, _ := strconv.ParseInt(os.Getenv("LEVEE_FAULT_START"), 10, 64)
	end, _ := strconv.ParseInt(os.Getenv("LEVEE_FAULT_END"), 10, 64)
	time.Sleep(time.Until(time.UnixMicro(start)))
	var mu sync.Mutex
	var out faultLog
	var wg sync.WaitGroup
	// 6× the limit offered by the fleet: each goroutine calls every 3·8/(6·40) s = 100ms.
	pace := faultPeriod * faultReplicas * faultWorkers / (6 * faultLimit)
	for range faultWorkers {
		wg.Go(func() {
			tick := time.NewTicker(pace)
			defer tick.Stop()
			for now := range tick.C {
				if now.UnixMicro() >= end {
					return
				}
				var local int64
				ctx := context.WithValue(context.Background(), localKey{}, &local)
				before := time.Now().UnixMicro()
				err := rl.AcquirePermission(ctx, 1)
				after := time.Now().UnixMicro()
				mu.Lock()
				out.Offered++
				if err == nil {
					out.Admitted = append(out.Admitted, [3]int64{before, after, local})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.Metrics = rl.Metrics()
	_ = rl.Close()
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// faultCycle is one cycle of the run as counted from the replicas' logs.
type faultCycle struct {
	start    int64 // µs
	admitted [faultReplicas]int
	local    [faultReplicas]int // of admitted, those the local shares granted
	total    int
	fault    string
}

// assignCycles counts each admission in a cycle its interval overlaps, earliest deadline
// first: an admission whose interval straddles a boundary goes to the earlier cycle while it
// has room. It returns the admissions per replica per cycle index from first.
func assignCycles(logs [faultReplicas]faultLog, first int64, n int) []faultCycle {
	type adm struct {
		replica int
		lo, hi  int64 // cycles
		local   bool
	}
	period := faultPeriod.Microseconds()
	var all []adm
	for r, l := range logs {
		for _, iv := range l.Admitted {
			all = append(all, adm{r, iv[0]/period - first, iv[1]/period - first, iv[2] == 1})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].hi != all[j].hi {
			return all[i].hi < all[j].hi
		}
		return all[i].lo < all[j].lo
	})
	cycles := make([]faultCycle, n)
	for i := range cycles {
		cycles[i].start = (first + int64(i)) * period
	}
	for _, a := range all {
		k := a.lo
		for k < a.hi && (k < 0 || k >= int64(n) || cycles[k].total >= faultLimit) {
			k++
		}
		if k < 0 || k >= int64(n) {
			continue // outside the run
		}
		cycles[k].admitted[a.replica]++
		if a.local {
			cycles[k].local[a.replica]++
		}
		cycles[k].total++
	}
	return cycles
}

// timeline lists the admissions whose interval overlaps the cycle starting at start, in the
// order they began, for the message of a failed run.
func timeline(logs [faultReplicas]faultLog, start int64) string {
	period := faultPeriod.Microseconds()
	type row struct {
		replica     int
		local       int64
		before, end int64
	}
	var rows []row
	for r, l := range logs {
		for _, iv := range l.Admitted {
			if iv[1] >= start && iv[0] < start+period {
				rows = append(rows, row{r + 1, iv[2], iv[0] - start, iv[1] - start})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].before < rows[j].before })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%d %d %d %d\n", r.replica, r.local, r.before, r.end)
	}
	return b.String()
}

func TestFaultRunLimitHoldsWhateverRedisDoes(t *testing.T) {
	s := startRedis(t)
	stress := integration.Program(t, "apt-get install -y stress-ng", "stress-ng")
	self, err := os.Executable()
	require.NoError(t, err)

	proxyAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	proxy := exec.Command(self)
	proxy.Env = append(os.Environ(), faultRoleEnv+"=proxy", "LEVEE_FAULT_LISTEN="+proxyAddr, "LEVEE_FAULT_UPSTREAM="+s.addr())
	proxyOut, err := proxy.StdoutPipe()
	require.NoError(t, err)
	proxy.Stderr = os.Stderr
	require.NoError(t, proxy.Start())
	t.Cleanup(func() { _ = proxy.Process.Kill(); _ = proxy.Wait() })
	line, err := bufio.NewReader(proxyOut).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	// The run starts on the second cycle boundary from now, after the replicas' start-up.
	period := faultPeriod.Microseconds()
	first := time.Now().UnixMicro()/period + 2
	start, end := first*period, (first+faultSeconds)*period
	load := exec.Command(stress, "--cpu", "1", "--cpu-load", "60", "--timeout", strconv.Itoa(faultSeconds+3)+"s", "--quiet")
	require.NoError(t, load.Start())
	t.Cleanup(func() { _ = load.Process.Kill(); _ = load.Wait() })

	var replicas [faultReplicas]*exec.Cmd
	var outs [faultReplicas]strings.Builder
	for i := range replicas {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), faultRoleEnv+"=replica", "LEVEE_FAULT_ADDR="+proxyAddr,
			"LEVEE_FAULT_START="+strconv.FormatInt(start, 10), "LEVEE_FAULT_END="+strconv.FormatInt(end, 10))
		cmd.Stdout = &outs[i]
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		replicas[i] = cmd
	}
	t.Cleanup(func() {
		for _, cmd := range replicas {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}
	})

	admin := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
	defer func() { _ = admin.Close() }()
	at := func(sec float64) { time.Sleep(time.Until(time.UnixMicro(start + int64(sec*float64(period))))) }
	faults := map[int]string{}
	mark := func(from, to int, name string) {
		for k := from; k <= to; k++ {
			faults[k] = name
		}
	}
	at(3.5)
	s.kill()
	at(6.5)
	s.start()
	mark(3, 7, "killed")
	at(9.5)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGSTOP))
	at(12.5)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGCONT))
	mark(9, 13, "SIGSTOP")
	at(15.5)
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err())
	mark(15, 19, "CLIENT PAUSE")

	// The replicas end at the end of the run; one that has not ended 30s later is killed and
	// fails the test, so that the run takes a bounded time whatever happens.
	waited := make(chan error, faultReplicas)
	for _, cmd := range replicas {
		go func() { waited <- cmd.Wait() }()
	}
	overdue := time.NewTimer(time.Until(time.UnixMicro(end)) + 30*time.Second)
	defer overdue.Stop()
	for range faultReplicas {
		select {
		case err := <-waited:
			require.NoError(t, err, "a replica failed")
		case <-overdue.C:
			for _, cmd := range replicas {
				_ = cmd.Process.Kill()
			}
			for range faultReplicas {
				<-waited
			}
			t.Fatal("the replicas did not end within 30s of the run's end")
		}
	}
	var logs [faultReplicas]faultLog
	for i := range replicas {
		require.NoError(t, json.Unmarshal([]byte(outs[i].String()), &logs[i]), "replica %d", i)
	}
	cycles := assignCycles(logs, first, faultSeconds)
	var b strings.Builder
	fmt.Fprintf(&b, "second  replica 1  replica 2  replica 3  fleet  (limit %d; in brackets: granted by the local share)\n", faultLimit)
	over := 0
	for i, c := range cycles {
		col := func(r int) string { return fmt.Sprintf("%d (%d)", c.admitted[r], c.local[r]) }
		fmt.Fprintf(&b, "%6d  %9s  %9s  %9s  %5d  %s\n", i, col(0), col(1), col(2), c.total, faults[i])
		if c.total > faultLimit {
			over++
		}
	}
	for i, l := range logs {
		m := l.Metrics
		fmt.Fprintf(&b, "replica %d: offered %d, admitted %d (Redis %d, local %d), store refused %d, store failures %d, breaker rejections %d, episodes %d, reclaimed %d, heartbeats %d, replicas %d, checks overrunning StoreTimeout %.0f%%\n",
			i+1, l.Offered, len(l.Admitted), m.Permitted, m.LocalPermitted, m.StoreRefused, m.StoreFailures, m.BreakerRejections, m.Episodes, m.Reclaimed, m.Heartbeats, m.Replicas,
			100*float64(m.StoreFailures)/float64(max(1, m.Permitted+m.Refused+m.StoreFailures)))
	}
	t.Log("\n" + b.String())
	// What the design guarantees (see Config.FailureMode): a replica grants from its local
	// share only in cycles it did not promise Redis to stay out of, and every check holds back
	// the shares of the replicas without such a promise, so a cycle admits at most the limit,
	// plus the documented slack: at most one permission per replica per episode edge, and at
	// most 5 % of the limit.
	slack := min(faultLimit*5/100, faultReplicas)
	for i, c := range cycles {
		if c.total > faultLimit+slack {
			t.Logf("admissions of second %d (replica, local, µs into the second before and after):\n%s", i, timeline(logs, c.start))
		}
		require.LessOrEqual(t, c.total, faultLimit+slack, "second %d\n%s", i, b.String())
	}
	edges := 0
	for _, l := range logs {
		edges += 2 * int(l.Metrics.Episodes)
	}
	require.LessOrEqual(t, over, edges, "cycles above the limit are episode edges\n%s", b.String())
	// The run exercised the local shares (Redis killed for 3s is an episode however loaded
	// the machine); how much Redis itself decided depends on the load.
	local := uint64(0)
	for _, l := range logs {
		local += l.Metrics.LocalPermitted
	}
	require.Positive(t, local, "the local shares granted nothing\n%s", b.String())
}
