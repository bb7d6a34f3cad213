package leveegrpc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/levee-go/levee/retry"
)

// pastDeadline has a deadline that has passed while its Err is still nil.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// DEADLINE_EXCEEDED once the caller's deadline has passed is the caller's, even before
// ctx.Err() is set; before the deadline, or another code, it is not.
func TestCallerDeadline(t *testing.T) {
	deadline := status.Error(codes.DeadlineExceeded, "deadline")
	assert.True(t, callerDeadline(pastDeadline{context.Background()}, deadline))
	assert.False(t, callerDeadline(pastDeadline{context.Background()}, status.Error(codes.Unavailable, "down")))
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	assert.False(t, callerDeadline(ctx, deadline))
	assert.False(t, callerDeadline(context.Background(), deadline))

	err := attemptError(pastDeadline{context.Background()}, deadline, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the unary attempt's error carries the caller's deadline")
}

func TestPreviousAttemptsMetadata(t *testing.T) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "k", "v")
	assert.Equal(t, ctx, withPreviousAttempts(ctx, 0), "the first attempt carries nothing")
	md, _ := metadata.FromOutgoingContext(withPreviousAttempts(ctx, 2))
	assert.Equal(t, []string{"2"}, md.Get(PreviousAttemptsKey))
	assert.Equal(t, []string{"v"}, md.Get("k"))
	orig, _ := metadata.FromOutgoingContext(ctx)
	assert.Empty(t, orig.Get(PreviousAttemptsKey), "the caller's metadata is not modified")

	for _, tc := range []struct {
		vs   []string
		want int
	}{
		{nil, 0}, {[]string{"0"}, 1}, {[]string{"2"}, 3}, {[]string{"1", "2"}, 0}, {[]string{"-1"}, 0}, {[]string{"x"}, 0},
	} {
		in := metadata.NewIncomingContext(context.Background(), metadata.MD{PreviousAttemptsKey: tc.vs})
		assert.Equal(t, tc.want, retry.IncomingAttempt(withIncomingAttempt(in)), "%q", tc.vs)
	}
	assert.Equal(t, 0, retry.IncomingAttempt(withIncomingAttempt(context.Background())))
}
