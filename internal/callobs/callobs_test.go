package callobs

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

type recorder struct{ events []Event }

func (r *recorder) OnCallEvent(_ context.Context, e Event) { r.events = append(r.events, e) }

func TestReportReachesTheObserverOfTheContext(t *testing.T) {
	r := &recorder{}
	ctx := With(context.Background(), r)
	Report(ctx, Event{Kind: Wait, Pattern: "retry", Name: "r", Attempt: 2})
	Report(context.Background(), Event{Kind: Attempt})
	assert.Equal(t, []Event{{Kind: Wait, Pattern: "retry", Name: "r", Attempt: 2}}, r.events)
	assert.Same(t, r, From(ctx))
	assert.Nil(t, From(context.Background()))
	assert.Equal(t, context.Background(), With(context.Background(), nil))
}

func TestNoObserverAllocatesNothing(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "v")
	assert.Zero(t, testing.AllocsPerRun(100, func() { Report(ctx, Event{Kind: Attempt, Pattern: "retry"}) }))
}
