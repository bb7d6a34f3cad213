package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server process this program started, listening on 127.0.0.1 only,
// with persistence off: the example's data lives and dies with it.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// errNoRedisServer is returned by startRedis when no redis-server is on PATH.
var errNoRedisServer = errors.New("redis-server not found on PATH (Debian: apt-get install redis-server)")

// startRedis starts redis-server (path, or the one on PATH when path is empty) on a free port
// of 127.0.0.1, with no snapshot and no append-only file, and returns once it answers PING
// (within 10s). The caller must stop it.
func startRedis(ctx context.Context, path string) (*redisServer, error) {
	if path == "" {
		p, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, errNoRedisServer
		}
		path = p
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// Not CommandContext: the server must outlive nothing but stop, which kills it.
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer rdb.Close()
	for {
		if err := rdb.Ping(ctx).Err(); err == nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %w", s.addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop kills the server and waits for it to exit.
func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
