package leveeredis_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/integration"
)

// redisServer is a redis-server process the test owns (Debian's package redis-server, on
// PATH), on a free loopback port, without persistence and with DEBUG enabled, so that tests
// can stall it, kill it and restart it on the same port. Its clock is the wall clock.
type redisServer struct {
	t    testing.TB
	path string
	port int
	cmd  *exec.Cmd
}

// startRedis starts redis-server from PATH, stopped when the test ends. Without it the test is
// skipped on a developer's machine and fails under CI (CI set in the environment).
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	path := integration.Program(t, "apt-get install -y redis-server", "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	s := &redisServer{t: t, path: path, port: port}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// start runs the server on its port and waits until it answers PING.
func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.path, "--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--save", "", "--appendonly", "no", "--enable-debug-command", "local")
	require.NoError(s.t, s.cmd.Start())
	c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, DisableIdentity: true})
	defer func() { _ = c.Close() }()
	require.Eventually(s.t, func() bool { return c.Ping(context.Background()).Err() == nil },
		5*time.Second, 10*time.Millisecond, "redis-server did not answer PING")
}

// kill ends the server at once (SIGKILL), as a crash, and waits for it.
func (s *redisServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

func (s *redisServer) stop() { s.kill() }

// client fails fast as production clients should, with timeouts a machine loaded by -race
// and other processes still meets: the shared breaker's tests use it.
func (s *redisServer) client() *redis.Client {
	o := fastFail(&redis.Options{Addr: s.addr()})
	o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
	return redis.NewClient(o)
}

// limiterClient returns a client with the settings a shared rate limiter needs, closed when
// the test ends.
func (s *redisServer) limiterClient(t *testing.T) *redis.Client {
	c := redis.NewClient(limiterOptions(s.addr()))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// limiterOptions are the options of a shared rate limiter's client in these tests: no retries
// of its own, the context's deadline honoured, and timeouts of a fast-failing production
// client.
func limiterOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialTimeout:           50 * time.Millisecond,
		ReadTimeout:           50 * time.Millisecond,
		WriteTimeout:          50 * time.Millisecond,
		PoolTimeout:           60 * time.Millisecond,
	}
}
