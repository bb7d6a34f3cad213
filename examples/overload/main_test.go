package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/priority"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The program on a fake clock over in-memory connections: every request is counted once, no
// critical request is shed, most sheddable ones are, and the work serves about its capacity.
func TestRunUnderThreeTimesOverload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		var out bytes.Buffer
		rep, err := run(&out, ln, &http.Transport{DialContext: ln.dial, MaxIdleConnsPerHost: 1000}, "http://overload.test")
		require.NoError(t, err)
		t.Log("\n" + out.String())
		sent := map[cell]int{}
		for i := range rate * int(duration.Seconds()) {
			tenant, p := request(i)
			sent[cell{tenant, p}]++
		}
		admitted := 0
		for c, n := range sent {
			got := rep.Total[c]
			assert.Equal(t, n, got.Admitted+got.Shed, "%v: every request counted", c)
			admitted += got.Admitted
		}
		for _, tenant := range tenants {
			crit := rep.Total[cell{tenant, priority.Critical}]
			assert.Zero(t, crit.Shed, "%s: critical shed", tenant)
			shed := rep.Total[cell{tenant, priority.Sheddable}]
			assert.Greater(t, shed.Shed*10, shed.Admitted*8, "%s: at least 80 %% of sheddable shed", tenant)
		}
		// The work serves about 400 a second: 2,000 in 5 s.
		assert.InDelta(t, 2000, admitted, 300)

		// Every second: the requests sent in it counted in it (give or take the few that arrive
		// just after a second's end, counted in the next), no critical one shed.
		require.Len(t, rep.PerSecond, 5)
		for sec, m := range rep.PerSecond {
			sentIn := map[cell]int{}
			for i := sec * rate; i < (sec+1)*rate; i++ {
				tenant, p := request(i)
				sentIn[cell{tenant, p}]++
			}
			for c, n := range sentIn {
				got := m[c]
				assert.InDelta(t, n, got.Admitted+got.Shed, 2, "second %d, %v: the requests sent in it", sec+1, c)
				if c.Priority == priority.Critical {
					assert.Zero(t, got.Shed, "second %d, %v: critical shed", sec+1, c)
				}
			}
		}

		// The output: a header, a line per second and a line of totals, admitted/shed for
		// each tenant and priority.
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Len(t, lines, 7)
		assert.Equal(t, []string{"sec", "acme", "critical", "acme", "normal", "acme", "sheddable",
			"globex", "critical", "globex", "normal", "globex", "sheddable", "(admitted/shed)"}, strings.Fields(lines[0]))
		for i, m := range append(rep.PerSecond, rep.Total) {
			want := []string{fmt.Sprint(i + 1)}
			if i == len(rep.PerSecond) {
				want[0] = "all"
			}
			for _, tenant := range tenants {
				for _, p := range priorities {
					c := m[cell{tenant, p}]
					want = append(want, fmt.Sprintf("%d/%d", c.Admitted, c.Shed))
				}
			}
			assert.Equal(t, want, strings.Fields(lines[i+1]), "line %d", i+1)
		}
	})
}

type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "overload.test" }
