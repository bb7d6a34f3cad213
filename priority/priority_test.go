package priority_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/priority"
)

func TestPriorities(t *testing.T) {
	for i, want := range []string{"sheddable", "low", "normal", "high", "critical"} {
		p := priority.Priority(i)
		assert.Equal(t, want, p.String())
		assert.Equal(t, priority.Level(i*100), p.MinLevel())
		assert.Equal(t, priority.Level(i*100+99), p.MaxLevel())
		got, err := priority.Parse(want)
		require.NoError(t, err)
		assert.Equal(t, p, got)
		for range 50 {
			l := p.RandomLevel()
			assert.Equal(t, p, l.Priority())
		}
	}
	got, err := priority.Parse("CRITICAL")
	require.NoError(t, err)
	assert.Equal(t, priority.Critical, got)
	_, err = priority.Parse("urgent")
	assert.EqualError(t, err, `priority: unknown priority "urgent", want one of sheddable, low, normal, high, critical`)
	assert.Equal(t, "Priority(7)", priority.Priority(7).String())
	assert.False(t, priority.Priority(5).Valid())
	assert.Equal(t, priority.Critical, priority.Level(1000).Priority())
	assert.Equal(t, "high/37", priority.Level(337).String())
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, priority.Normal, priority.FromContext(ctx))
	assert.Equal(t, priority.Normal, priority.LevelFromContext(ctx).Priority())
	assert.Equal(t, priority.Normal, priority.FromContext(nil))
	_, ok := priority.Carried(ctx)
	assert.False(t, ok)

	c := priority.WithPriority(ctx, priority.Critical)
	assert.Equal(t, priority.Critical, priority.FromContext(c))
	for range 50 {
		assert.Equal(t, priority.Critical, priority.LevelFromContext(c).Priority())
	}
	h, ok := priority.Carried(c)
	assert.True(t, ok)
	assert.Equal(t, "critical", h)

	l := priority.WithLevel(ctx, 137)
	assert.Equal(t, priority.Low, priority.FromContext(l))
	assert.Equal(t, priority.Level(137), priority.LevelFromContext(l))
	h, _ = priority.Carried(l)
	assert.Equal(t, "low/37", h)
	assert.Equal(t, priority.MaxLevel, priority.LevelFromContext(priority.WithLevel(ctx, 9999)))
	assert.Equal(t, priority.Normal, priority.FromContext(priority.WithPriority(ctx, 9)))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = priority.LevelFromContext(c) }))
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string
		err    string
	}{
		{"critical", "critical", ""},
		{" High ", "high", ""},
		{"high/37", "high/37", ""},
		{"sheddable / 0", "sheddable/0", ""},
		{"urgent", "", `priority: unknown priority "urgent", want one of sheddable, low, normal, high, critical`},
		{"high/100", "", `priority: level offset in "high/100" must be in [0, 99]`},
		{"high/-1", "", `priority: level offset in "high/-1" must be in [0, 99]`},
		{"high/x", "", `priority: level offset in "high/x" must be in [0, 99]`},
	} {
		ctx, err := priority.ParseHeader(context.Background(), tc.header)
		got, _ := priority.Carried(ctx)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.header)
			assert.Equal(t, "", got)
			continue
		}
		require.NoError(t, err, tc.header)
		assert.Equal(t, tc.want, got, tc.header)
	}
	ctx, err := priority.ParseHeader(context.Background(), "")
	require.NoError(t, err)
	_, ok := priority.Carried(ctx)
	assert.False(t, ok)
	assert.Equal(t, priority.HeaderName("Levee-Priority"), priority.DefaultHeaderName)
}

// A server reads the header into the context; a client writes what its context carries.
func ExampleParseHeader() {
	ctx, err := priority.ParseHeader(context.Background(), "high/37")
	if err != nil {
		panic(err)
	}
	header, _ := priority.Carried(ctx)
	fmt.Println(priority.FromContext(ctx), priority.LevelFromContext(ctx), header)
	_, err = priority.ParseHeader(context.Background(), "urgent")
	fmt.Println(err)
	// Output:
	// high high/37 high/37
	// priority: unknown priority "urgent", want one of sheddable, low, normal, high, critical
}
