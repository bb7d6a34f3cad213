package leveegrpc_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/leveegrpc"
	"github.com/levee-go/levee/ratelimiter"
)

func okUnary(context.Context, any) (any, error) { return "ok", nil }

// A core rate limiter given as a levee.PermissionLimiter sends its real wait as pushback.
func TestServerLimiterCorePushbackIsTheRealWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := levee.Must(ratelimiter.New("server", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 10 * time.Second, TimeoutDuration: ratelimiter.NoWait,
		}))
		s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Limiter: rl})
		require.NoError(t, err)
		intercept := s.UnaryServerInterceptor()
		ts := &transportStream{}
		ctx := grpc.NewContextWithServerTransportStream(t.Context(), ts)
		_, err = intercept(ctx, nil, unaryInfo, okUnary)
		require.NoError(t, err)
		time.Sleep(2500 * time.Millisecond)
		_, err = intercept(ctx, nil, unaryInfo, okUnary)
		assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, []string{"7500"}, ts.trailer.Get(leveegrpc.PushbackKey))
	})
}

type refusingLimiter struct{}

func (refusingLimiter) AcquirePermission(context.Context, int) error {
	return ratelimiter.ErrRequestNotPermitted
}

type advisingLimiter struct{ refusingLimiter }

func (advisingLimiter) RetryAfter() time.Duration { return 1234500 * time.Microsecond }

// Another kind of limiter sends its RetryAfter, rounded up to the millisecond; one that cannot
// say sends no pushback.
func TestServerLimiterRetryAdvisorPushback(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    levee.PermissionLimiter
		want []string
	}{
		{"advisor", advisingLimiter{}, []string{"1235"}},
		{"silent", refusingLimiter{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Limiter: tc.l})
			require.NoError(t, err)
			ts := &transportStream{}
			ctx := grpc.NewContextWithServerTransportStream(t.Context(), ts)
			_, err = s.UnaryServerInterceptor()(ctx, nil, unaryInfo, okUnary)
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			assert.Equal(t, tc.want, ts.trailer.Get(leveegrpc.PushbackKey))
		})
	}
}

// An adaptive limit of 1: a call while another runs is RESOURCE_EXHAUSTED with the latency
// the limiter measured as pushback, or BulkheadPushback before it measured any.
func TestServerConcurrencyLimiterAdaptivePushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		al := levee.Must(adaptive.New("server", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}))
		s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{ConcurrencyLimiter: al, BulkheadPushback: 300 * time.Millisecond})
		require.NoError(t, err)
		intercept := s.UnaryServerInterceptor()
		release := make(chan struct{})
		blocking := func(context.Context, any) (any, error) { <-release; return "ok", nil }
		hold := func() chan error {
			done := make(chan error, 1)
			go func() {
				_, err := intercept(t.Context(), nil, unaryInfo, blocking)
				done <- err
			}()
			synctest.Wait()
			return done
		}
		refused := func() []string {
			ts := &transportStream{}
			ctx := grpc.NewContextWithServerTransportStream(t.Context(), ts)
			_, err := intercept(ctx, nil, unaryInfo, okUnary)
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
			return ts.trailer.Get(leveegrpc.PushbackKey)
		}

		held := hold()
		assert.Equal(t, []string{"300"}, refused(), "nothing measured yet: BulkheadPushback")
		close(release)
		require.NoError(t, <-held)
		assert.Equal(t, time.Duration(0), al.Metrics().NoLoadLatency, "the held call took no time")

		release = make(chan struct{})
		_, err = intercept(t.Context(), nil, unaryInfo, func(context.Context, any) (any, error) {
			time.Sleep(2500 * time.Millisecond)
			return "ok", nil
		})
		require.NoError(t, err)
		held = hold()
		assert.Equal(t, []string{"2500"}, refused())
		close(release)
		require.NoError(t, <-held)
		assert.Equal(t, 0, al.Metrics().InFlight)
	})
}

// A nil pointer in a role's field is a limiter left unset.
func TestServerNilPointerRolesAreUnset(t *testing.T) {
	var rl *ratelimiter.RateLimiter
	var al *adaptive.Limiter
	s, err := leveegrpc.NewServer(leveegrpc.ServerConfig{Limiter: rl, ConcurrencyLimiter: al})
	require.NoError(t, err)
	resp, err := s.UnaryServerInterceptor()(t.Context(), nil, unaryInfo, okUnary)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp)
}
