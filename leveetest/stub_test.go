package leveetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/leveetest"
)

var errDown = errors.New("dependency down")

func TestOKAndFail(t *testing.T) {
	ok := leveetest.NewStub(leveetest.OK(42))
	v, err := ok.Call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)

	fail := leveetest.NewStub(leveetest.Fail[int](errDown))
	v, err = fail.Call(context.Background())
	assert.Same(t, errDown, err)
	assert.Equal(t, 0, v)
	assert.Equal(t, int64(1), fail.Invocations())
	assert.Equal(t, int64(0), fail.Running())
	assert.Equal(t, int64(1), fail.MaxConcurrent())
	assert.Equal(t, int64(0), fail.Cancelled())
}

func TestZeroAndNilBehaviour(t *testing.T) {
	var zero leveetest.Stub[string]
	v, err := zero.Call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "", v)
	assert.Equal(t, int64(1), zero.Invocations())

	s := leveetest.NewStub[string](nil)
	v, err = s.Call(nil) //nolint:staticcheck // a nil ctx is accepted
	require.NoError(t, err)
	assert.Equal(t, "", v)
}

func TestFirstThenOK(t *testing.T) {
	s := leveetest.NewStub(leveetest.First(3, leveetest.Fail[int](errDown), leveetest.OK(7)))
	var got []string
	for range 5 {
		v, err := s.Call(context.Background())
		if err != nil {
			got = append(got, err.Error())
		} else {
			got = append(got, "ok")
			assert.Equal(t, 7, v)
		}
	}
	assert.Equal(t, []string{"dependency down", "dependency down", "dependency down", "ok", "ok"}, got)
	assert.Equal(t, int64(5), s.Invocations())
}

func TestBehaviourSeesItsOwnNumbers(t *testing.T) {
	var seen []int64
	var mu sync.Mutex
	record := func(ctx context.Context, call int64) (int64, error) {
		mu.Lock()
		seen = append(seen, call)
		mu.Unlock()
		return call, nil
	}
	s := leveetest.NewStub(leveetest.First(2, leveetest.Fail[int64](errDown), leveetest.First(1, record, record)))
	for range 5 {
		_, _ = s.Call(context.Background())
	}
	assert.Equal(t, []int64{1, 1, 2}, seen)

	seen = nil
	s.SetBehaviour(leveetest.Sequence(record, leveetest.Fail[int64](errDown), record))
	var errs int
	for range 5 {
		if _, err := s.Call(context.Background()); err != nil {
			errs++
		}
	}
	assert.Equal(t, []int64{1, 1, 2, 3}, seen)
	assert.Equal(t, 1, errs)
	assert.Equal(t, int64(10), s.Invocations())
}

func TestSequenceEmpty(t *testing.T) {
	s := leveetest.NewStub(leveetest.Sequence[int]())
	v, err := s.Call(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, v)
}

func TestSlowHonoursCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := leveetest.NewStub(leveetest.Slow(3*time.Second, leveetest.OK("late")))
		start := time.Now()
		v, err := s.Call(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "late", v)
		assert.Equal(t, 3*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		v, err = s.Call(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, "", v)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, int64(2), s.Invocations())
		assert.Equal(t, int64(1), s.Cancelled())
	})
}

func TestSlowZeroDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := leveetest.NewStub(leveetest.Slow(0, leveetest.OK(1)))
		start := time.Now()
		v, err := s.Call(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Equal(t, time.Duration(0), time.Since(start))
	})
}

func TestHangUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := leveetest.NewStub(leveetest.Hang[int]())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(ctx)
			done <- err
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, int64(1), s.Running())
		assert.Len(t, done, 0)
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, int64(0), s.Running())
		assert.Equal(t, int64(1), s.Cancelled())
	})
}

func TestIgnoreCtxSleepsRegardless(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := leveetest.NewStub(leveetest.IgnoreCtx(5*time.Second, leveetest.OK("done")))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		v, err := s.Call(ctx)
		require.NoError(t, err)
		assert.Equal(t, "done", v)
		assert.Equal(t, 5*time.Second, time.Since(start))
		assert.Equal(t, int64(1), s.Cancelled())
	})
}

func TestPanicCountedAndGuarded(t *testing.T) {
	s := leveetest.NewStub(leveetest.Panic[int]("boom"))
	assert.PanicsWithValue(t, "boom", func() { _, _ = s.Call(context.Background()) })
	assert.Equal(t, int64(1), s.Panics())
	assert.Equal(t, int64(0), s.Running())

	_, err := levee.Compose[int]().Execute(context.Background(), s.Call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, int64(2), s.Panics())
}

func TestFlakyIsDeterministic(t *testing.T) {
	run := func() (fails int, pattern []bool) {
		s := leveetest.NewStub(leveetest.Flaky(0.3, 1, leveetest.Fail[int](errDown), leveetest.OK(1)))
		for range 1000 {
			_, err := s.Call(context.Background())
			if err != nil {
				fails++
			}
			if len(pattern) < 10 {
				pattern = append(pattern, err != nil)
			}
		}
		return fails, pattern
	}
	fails, pattern := run()
	assert.Equal(t, 287, fails) // measured: PCG(1, 1), 1,000 draws below 0.3
	fails2, pattern2 := run()
	assert.Equal(t, fails, fails2)
	assert.Equal(t, pattern, pattern2)

	never := leveetest.NewStub(leveetest.Flaky(0, 1, leveetest.Fail[int](errDown), leveetest.OK(1)))
	always := leveetest.NewStub(leveetest.Flaky(1, 1, leveetest.Fail[int](errDown), leveetest.OK(1)))
	for range 100 {
		_, err := never.Call(context.Background())
		require.NoError(t, err)
		_, err = always.Call(context.Background())
		require.ErrorIs(t, err, errDown)
	}
}

func TestMaxConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := leveetest.NewStub(leveetest.Slow(time.Second, leveetest.OK(0)))
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { _, _ = s.Call(context.Background()) })
		}
		synctest.Wait()
		assert.Equal(t, int64(4), s.Running())
		wg.Wait()
		assert.Equal(t, int64(0), s.Running())
		assert.Equal(t, int64(4), s.MaxConcurrent())
		for range 2 {
			wg.Go(func() { _, _ = s.Call(context.Background()) })
		}
		wg.Wait()
		assert.Equal(t, int64(4), s.MaxConcurrent())
		assert.Equal(t, int64(6), s.Invocations())
	})
}
