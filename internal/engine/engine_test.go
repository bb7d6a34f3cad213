package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettingsRefuseOutOfRangeValuesAndContradictions(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(s *Settings) error
		want string
	}{
		{"Concurrency 0", func(s *Settings) error { return s.SetConcurrency(0) }, "Concurrency must be in [1, 65536], got 0"},
		{"Concurrency too large", func(s *Settings) error { return s.SetConcurrency(MaxConcurrency + 1) }, "Concurrency must be in [1, 65536], got 65537"},
		{"Window 0", func(s *Settings) error { return s.SetWindow(0) }, "Window must be in [1, 65536], got 0"},
		{"Window too large", func(s *Settings) error { return s.SetWindow(MaxWindow + 1) }, "Window must be in [1, 65536], got 65537"},
		{"Buffer negative", func(s *Settings) error { return s.SetBuffer(-1) }, "Buffer must be in [0, 1048576], got -1"},
		{"nil fallback", func(s *Settings) error { return s.SetFallback(nil, true) }, "WithFallback needs a function, got nil"},
		{"PauseWhileOpen negative", func(s *Settings) error { return s.SetPauseWhileOpen(-1) }, "PauseWhileOpen maxWait must be >= 0 (0: no bound), got -1ns"},
		{"Window below Concurrency", func(s *Settings) error {
			require.NoError(t, s.SetConcurrency(8))
			require.NoError(t, s.SetWindow(7))
			return s.Check()
		}, "Window must be in [8, 65536] (at least Concurrency), got 7"},
		{"OrderByKeyAndInput and Unordered", func(s *Settings) error {
			require.NoError(t, s.SetKeyAndInput(KeyBy(func(v int) int { return v }), false))
			s.Unordered = true
			return s.Check()
		}, "set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end"},
		{"OrderByKey and OrderByKeyAndInput", func(s *Settings) error {
			require.NoError(t, s.SetKey(KeyBy(func(v int) int { return v }), false))
			require.NoError(t, s.SetKeyAndInput(KeyBy(func(v int) int { return v }), false))
			return s.Check()
		}, "set OrderByKey or OrderByKeyAndInput, not both"},
		{"nil OrderByKeyAndInput", func(s *Settings) error {
			return s.SetKeyAndInput(KeyBy[int, string](nil), true)
		}, "OrderByKeyAndInput needs a key function, got nil"},
		{"StopOnError and ContinueOnError", func(s *Settings) error {
			s.StopOnError, s.ContinueOnError = true, true
			return s.Check()
		}, "set StopOnError or ContinueOnError, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Defaults()
			assert.EqualError(t, tc.set(&s), tc.want)
		})
	}
	s := Defaults()
	assert.Equal(t, Settings{Concurrency: 1, Buffer: 64}, s)
	require.NoError(t, s.Check())
	require.NoError(t, s.SetWindow(1))
	require.NoError(t, s.Check(), "a window equal to the concurrency")
	s.Unordered = true
	require.NoError(t, s.Check(), "a Window with Unordered is a bound that always holds")
	assert.False(t, s.Ordered())
}

// Ordered tells the mode the options amount to: input order by default and with
// OrderByKeyAndInput, completion order with Unordered, key order only with OrderByKey.
func TestSettingsOrdered(t *testing.T) {
	key := KeyBy(func(v int) int { return v })
	for _, tc := range []struct {
		name       string
		set        func(s *Settings)
		ordered    bool
		keyOrdered bool
	}{
		{"default", func(*Settings) {}, true, false},
		{"Unordered", func(s *Settings) { s.Unordered = true }, false, false},
		{"OrderByKey", func(s *Settings) { require.NoError(t, s.SetKey(key, false)) }, false, false},
		{"OrderByKey and Unordered", func(s *Settings) { require.NoError(t, s.SetKey(key, false)); s.Unordered = true }, false, false},
		{"OrderByKeyAndInput", func(s *Settings) { require.NoError(t, s.SetKeyAndInput(key, false)) }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Defaults()
			tc.set(&s)
			require.NoError(t, s.Check())
			assert.Equal(t, tc.ordered, s.Ordered())
			assert.Equal(t, tc.keyOrdered, s.KeyInputOrder)
		})
	}
}

func TestFallbackChecksTheFunctionType(t *testing.T) {
	s := Defaults()
	fb, err := Fallback[int, string]("Map", &s)
	require.NoError(t, err)
	assert.Nil(t, fb)
	require.NoError(t, s.SetFallback(func(context.Context, int, error) (string, error) { return "fb", nil }, false))
	fb, err = Fallback[int, string]("Map", &s)
	require.NoError(t, err)
	v, err := fb(context.Background(), 1, nil)
	assert.Equal(t, "fb", v)
	require.NoError(t, err)
	_, err = Fallback[int, int]("Filter", &s)
	assert.EqualError(t, err, "Filter needs a WithFallback function of type func(context.Context, int, error) (int, error), got func(context.Context, int, error) (string, error)")
}

// run runs a stage over 0..n-1 whose call multiplies by 10, and returns what it delivered
// until deliver said stop (after max results).
func run(concurrency, window int, ordered bool, n, max int) []int {
	in := make(chan int, n)
	for i := range n {
		in <- i
	}
	close(in)
	ctx, cancel := context.WithCancel(context.Background())
	var got []int
	s := Stage[int, int]{
		Concurrency: concurrency, Window: window, Ordered: ordered,
		Receive: func(done <-chan struct{}) (int, bool) {
			select {
			case v, ok := <-in:
				return v, ok
			case <-done:
				return 0, false
			}
		},
		Call: func(seq, v int) int { return 10 * v },
		Deliver: func(r int) bool {
			got = append(got, r)
			return len(got) < max
		},
	}
	s.Run(ctx.Done(), cancel)
	return got
}

func TestStageDeliversInOrderAndStopsWhenDeliverSaysSo(t *testing.T) {
	for _, c := range []struct{ concurrency, window int }{{1, 0}, {3, 0}, {3, 7}} {
		t.Run(fmt.Sprintf("concurrency %d window %d", c.concurrency, c.window), func(t *testing.T) {
			assert.Equal(t, []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}, run(c.concurrency, c.window, true, 10, 100))
			assert.Equal(t, []int{0, 10, 20}, run(c.concurrency, c.window, true, 10, 3))
		})
	}
	got := run(3, 0, false, 10, 100)
	assert.ElementsMatch(t, []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}, got)
}

// Run returns only once every call it started has returned.
func TestStageRunWaitsForItsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running atomic.Int32
		in := make(chan int)
		go func() {
			for i := range 3 {
				in <- i
			}
		}()
		ctx, cancel := context.WithCancel(context.Background())
		release := make(chan struct{})
		s := Stage[int, int]{
			Concurrency: 3, Ordered: true,
			Receive: func(done <-chan struct{}) (int, bool) {
				select {
				case v := <-in:
					return v, true
				case <-done:
					return 0, false
				}
			},
			Call: func(seq, v int) int {
				running.Add(1)
				defer running.Add(-1)
				<-release
				return v
			},
			Deliver: func(int) bool { return true },
		}
		ended := make(chan struct{})
		go func() {
			s.Run(ctx.Done(), cancel)
			close(ended)
		}()
		synctest.Wait()
		assert.Equal(t, int32(3), running.Load())
		cancel()
		synctest.Wait()
		select {
		case <-ended:
			t.Fatal("Run returned while calls were running")
		default:
		}
		close(release)
		<-ended
		assert.Equal(t, int32(0), running.Load())
	})
}
