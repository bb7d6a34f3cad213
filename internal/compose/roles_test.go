package compose_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/retry"
)

type advising struct{ after time.Duration }

func (a advising) AcquirePermission(context.Context, int) error { return nil }
func (a advising) RetryAfter() time.Duration                    { return a.after }

type silent struct{}

func (silent) AcquirePermission(context.Context, int) error { return nil }

type permit struct{}

func (permit) OnSuccess()    {}
func (permit) OnError(error) {}
func (permit) Release()      {}

type admitter struct{ after time.Duration }

func (admitter) Admit(context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	return permit{}, nil
}
func (a admitter) RetryAfter() time.Duration { return a.after }

// A limiter or admitter of another kind that says when to come back can refuse and tells
// RetryAfter its wait; one that cannot say is no pattern a pause could wait for.
func TestRolesInRetryAfterAndCanRefuse(t *testing.T) {
	s := compose.New[int]().With(compose.Permissions[int](silent{}))
	assert.False(t, s.CanRefuse())
	c := compose.New[int]().With(compose.Permissions[int](advising{2 * time.Second}))
	assert.True(t, c.CanRefuse())
	assert.Equal(t, 2*time.Second, c.RetryAfter())
	c = c.With(compose.Admission[int](admitter{3 * time.Second}))
	assert.True(t, c.CanRefuse())
	assert.Equal(t, 3*time.Second, c.RetryAfter())
	v, err := c.Execute(context.Background(), func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	_, err = c.Execute(context.Background(), func(context.Context) (int, error) { return 0, errDown })
	assert.True(t, errors.Is(err, errDown))
}

func TestRetries(t *testing.T) {
	var nilChain *compose.Chain[int]
	assert.False(t, nilChain.Retries())
	c := compose.New[int]()
	assert.False(t, c.Retries())
	c = c.With(compose.Permissions[int](silent{}))
	assert.False(t, c.Retries())
	r, err := retry.New("r", retry.Config{})
	require.NoError(t, err)
	c = c.With(compose.Retry[int](r))
	assert.True(t, c.Retries())
	c = c.With(compose.Permissions[int](silent{}))
	assert.True(t, c.Retries(), "a retry anywhere in the chain")
}
