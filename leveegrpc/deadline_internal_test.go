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
	assert.Equal(t, ctx, withAttempt(ctx, 0, false), "the first attempt of a pipeline that does not retry carries nothing")
	md, _ := metadata.FromOutgoingContext(withAttempt(ctx, 0, true))
	assert.Equal(t, []string{"1"}, md.Get(AttemptCountKey), "the first attempt of a retrying pipeline")
	assert.Empty(t, md.Get(PreviousAttemptsKey))
	md, _ = metadata.FromOutgoingContext(withAttempt(ctx, 2, true))
	assert.Equal(t, []string{"2"}, md.Get(PreviousAttemptsKey))
	assert.Equal(t, []string{"3"}, md.Get(AttemptCountKey))
	assert.Equal(t, []string{"v"}, md.Get("k"))
	md, _ = metadata.FromOutgoingContext(withAttempt(ctx, 1, false))
	assert.Equal(t, []string{"1"}, md.Get(PreviousAttemptsKey), "a retry without a Retry layer (a Decorator's)")
	assert.Equal(t, []string{"2"}, md.Get(AttemptCountKey))
	caller := metadata.AppendToOutgoingContext(ctx, AttemptCountKey, "7", PreviousAttemptsKey, "6")
	md, _ = metadata.FromOutgoingContext(withAttempt(caller, 0, true))
	assert.Equal(t, []string{"1"}, md.Get(AttemptCountKey), "the caller's value is replaced")
	assert.Empty(t, md.Get(PreviousAttemptsKey), "the caller's value is removed from a first attempt")
	orig, _ := metadata.FromOutgoingContext(ctx)
	assert.Empty(t, orig.Get(PreviousAttemptsKey), "the caller's metadata is not modified")
	assert.Empty(t, orig.Get(AttemptCountKey), "the caller's metadata is not modified")

	for _, tc := range []struct {
		md   metadata.MD
		want int
	}{
		{metadata.MD{}, 0},
		{metadata.MD{PreviousAttemptsKey: {"0"}}, 1},
		{metadata.MD{PreviousAttemptsKey: {"2"}}, 3},
		{metadata.MD{PreviousAttemptsKey: {"1", "2"}}, 0},
		{metadata.MD{PreviousAttemptsKey: {"-1"}}, 0},
		{metadata.MD{PreviousAttemptsKey: {"x"}}, 0},
		{metadata.MD{AttemptCountKey: {"1"}}, 1},
		{metadata.MD{AttemptCountKey: {" 3 "}}, 3},
		{metadata.MD{AttemptCountKey: {"0"}}, 0},
		{metadata.MD{AttemptCountKey: {"1", "2"}}, 0},
		{metadata.MD{AttemptCountKey: {"2"}, PreviousAttemptsKey: {"4"}}, 2},
		{metadata.MD{AttemptCountKey: {"x"}, PreviousAttemptsKey: {"1"}}, 2},
	} {
		in := metadata.NewIncomingContext(context.Background(), tc.md)
		assert.Equal(t, tc.want, retry.IncomingAttempt(withIncomingAttempt(in)), "%v", tc.md)
	}
	assert.Equal(t, 0, retry.IncomingAttempt(withIncomingAttempt(context.Background())))
}
