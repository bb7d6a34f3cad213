package engine

import (
	"context"
	"math"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/safe"
)

func TestKeysChecksTheKeyFunctionType(t *testing.T) {
	s := Defaults()
	newLanes, err := Keys[int]("Map", &s)
	require.NoError(t, err)
	assert.Nil(t, newLanes, "no OrderByKey")

	assert.EqualError(t, s.SetKey(KeyBy[int, string](nil), true), "OrderByKey needs a key function, got nil")
	require.NoError(t, s.SetKey(KeyBy(func(v int) string { return "k" }), false))
	_, err = Keys[string]("Filter", &s)
	assert.EqualError(t, err, "Filter needs an OrderByKey function of type func(string) K, got func(int) string")
	newLanes, err = Keys[int]("Map", &s)
	require.NoError(t, err)
	require.NotNil(t, newLanes)

	assert.False(t, s.Ordered(), "OrderByKey orders by key only")
	s.Unordered = true
	require.NoError(t, s.Check(), "OrderByKey with Unordered is OrderByKey")
	assert.False(t, s.Ordered())
	s.Unordered = false
	require.NoError(t, s.SetConcurrency(4))
	require.NoError(t, s.SetWindow(16))
	require.NoError(t, s.Check(), "a Window with OrderByKey")
}

// A lane exists while its key has an input in flight; a lane left is reused for the next new
// key, with no trace of the old one.
func TestLanesForgetKeysWithNothingInFlight(t *testing.T) {
	ls := KeyBy(func(v int) int { return v % 10 }).newLanes()
	a, err := ls.Enter(11)
	require.NoError(t, err)
	b, err := ls.Enter(22)
	require.NoError(t, err)
	again, err := ls.Enter(31)
	require.NoError(t, err)
	assert.Same(t, a, again, "the same key, the same lane")
	assert.NotSame(t, a, b)
	assert.Equal(t, 2, ls.Len())

	ls.Leave(a)
	assert.Equal(t, 1, ls.Len())
	c, err := ls.Enter(3)
	require.NoError(t, err)
	assert.Same(t, a, c, "a lane left is reused")
	assert.Equal(t, Lane{head: -1, tail: -1, id: a.id}, *c)
	d, err := ls.Enter(41)
	require.NoError(t, err)
	assert.NotSame(t, c, d, "key 1's lane went to key 3")
	ls.Leave(b)
	ls.Leave(c)
	ls.Leave(d)
	assert.Equal(t, 0, ls.Len())
	assert.Equal(t, []int{0, 0, 0}, ls.(*lanes[int, int]).keys, "no key held past its lane")

	panicky := KeyBy(func(v int) int { panic("bad key") }).newLanes()
	l, err := panicky.Enter(1)
	assert.Nil(t, l)
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "bad key", pe.Value)
	assert.Equal(t, 0, panicky.Len())

	unhashable := KeyBy(func(v int) any { return []int{v} }).newLanes()
	l, err = unhashable.Enter(1)
	assert.Nil(t, l)
	require.ErrorAs(t, err, &pe)
	var re runtime.Error // its message differs between Go releases
	require.ErrorAs(t, pe, &re)
	assert.Contains(t, re.Error(), "unhashable type")
	assert.Contains(t, re.Error(), "[]int")
	assert.Equal(t, 0, unhashable.Len())
}

// keyedStage runs a stage by key over the inputs given, each of which is a key (the tens) and
// a call time in seconds (the units), and returns the inputs in the order delivered with the
// time of each, and the lanes once Run has returned.
func keyedStage(t *testing.T, concurrency, window int, inputs []int) (got []int, at []time.Duration, ls LaneSet[int]) {
	ls = KeyBy(func(v int) int { return v / 10 }).newLanes()
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	next := 0
	s := Stage[int, int]{
		Concurrency: concurrency, Window: window, Lanes: ls,
		Receive: func(done <-chan struct{}) (int, bool) {
			if next == len(inputs) {
				return 0, false
			}
			next++
			return inputs[next-1], true
		},
		Call: func(seq, v int) int {
			time.Sleep(time.Duration(v%10) * time.Second)
			return v
		},
		Fail: func(seq, v int, err error) int { return -1 },
		Deliver: func(r int) bool {
			got = append(got, r)
			at = append(at, time.Since(start))
			return true
		},
	}
	s.Run(ctx.Done(), cancel)
	return got, at, ls
}

// Key 1 has a slow call first; keys 2 and 3 go on past it, each in its own order.
func TestStageByKeyDeliversEachKeyInOrderAsSoonAsItsCallEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got, at, ls := keyedStage(t, 2, 8, []int{19, 21, 11, 22, 31, 23})
		assert.Equal(t, []int{21, 22, 31, 23, 19, 11}, got)
		s := time.Second
		assert.Equal(t, []time.Duration{1 * s, 3 * s, 4 * s, 7 * s, 9 * s, 10 * s}, at)
		assert.Equal(t, 0, ls.Len(), "no key left once every input is delivered")
	})
}

// With a window of 3, the slow key's three inputs fill it: key 2 waits for the first of them.
func TestStageByKeyIsBoundedByTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got, at, ls := keyedStage(t, 2, 3, []int{15, 11, 11, 23})
		assert.Equal(t, []int{15, 11, 11, 23}, got)
		s := time.Second
		assert.Equal(t, []time.Duration{5 * s, 6 * s, 7 * s, 8 * s}, at)
		assert.Equal(t, 0, ls.Len())
	})
}

// An input whose key function panicked fails without a call, ordered with nothing.
func TestStageByKeyFailsAnInputWithoutAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls := KeyBy(func(v int) int {
			if v < 0 {
				panic(v)
			}
			return v / 10
		}).newLanes()
		inputs := []int{12, -1, 11}
		next, calls := 0, 0
		var got []int
		ctx, cancel := context.WithCancel(context.Background())
		s := Stage[int, int]{
			Concurrency: 2, Lanes: ls,
			Receive: func(<-chan struct{}) (int, bool) {
				if next == len(inputs) {
					return 0, false
				}
				next++
				return inputs[next-1], true
			},
			Call: func(seq, v int) int {
				calls++
				time.Sleep(time.Duration(v%10) * time.Second)
				return v
			},
			Fail:    func(seq, v int, err error) int { return 1000*seq + v },
			Deliver: func(r int) bool { got = append(got, r); return true },
		}
		s.Run(ctx.Done(), cancel)
		assert.Equal(t, []int{999, 12, 11}, got)
		assert.Equal(t, 2, calls)
		assert.Equal(t, 0, ls.Len())
	})
}

// A key not equal to itself (NaN, or a struct or interface holding one) matches no key, not
// even its own: its input is ordered with nothing, and no lane is kept for it (a lane under
// NaN could never be deleted from the map, so the lanes grew with every such input).
func TestLanesOrderAKeyNotEqualToItselfWithNothing(t *testing.T) {
	nan := math.NaN()
	floats := KeyBy(func(v float64) float64 { return v }).newLanes()
	type pair struct {
		s string
		f float64
	}
	pairs := KeyBy(func(v float64) pair { return pair{"k", v} }).newLanes()
	anys := KeyBy(func(v float64) any { return v }).newLanes()
	for _, lanes := range []LaneSet[float64]{floats, pairs, anys} {
		for range 3 {
			l, err := lanes.Enter(nan)
			require.NoError(t, err)
			assert.Nil(t, l)
		}
		assert.Equal(t, 0, lanes.Len())
		l, err := lanes.Enter(1)
		require.NoError(t, err)
		require.NotNil(t, l)
		assert.Equal(t, 1, lanes.Len())
		lanes.Leave(l)
		assert.Equal(t, 0, lanes.Len())
	}
}
