package async_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
)

// bubbleTB hides *testing.T from rapid, which would otherwise call t.Deadline, a call testing
// forbids inside a synctest bubble.
type bubbleTB struct{ testing.TB }

// poolModel is the reference a WorkerPool is checked against: ThreadPoolExecutor's admission
// and keep-alive rules over workers that are each running a task or idle.
type poolModel struct {
	core, max, queueCap int
	keepAlive           time.Duration
	now                 time.Duration
	workers             []*modelWorker
	idle                []*modelWorker // the most recently idle last
	queue               []int
}

type modelWorker struct {
	task   int // -1 while idle
	timed  bool
	expiry time.Duration
}

func (m *poolModel) running() []int {
	var r []int
	for _, w := range m.workers {
		if w.task >= 0 {
			r = append(r, w.task)
		}
	}
	slices.Sort(r)
	return r
}

func (m *poolModel) submit(k int) (admitted bool) {
	switch {
	case len(m.workers) < m.core:
		m.workers = append(m.workers, &modelWorker{task: k})
	case len(m.idle) > 0:
		w := m.idle[len(m.idle)-1]
		m.idle = m.idle[:len(m.idle)-1]
		w.task = k
	case len(m.queue) < m.queueCap:
		m.queue = append(m.queue, k)
	case len(m.workers) < m.max:
		m.workers = append(m.workers, &modelWorker{task: k})
	default:
		return false
	}
	return true
}

// finish ends task k's run: its worker takes the next queued task, or goes idle, or exits.
func (m *poolModel) finish(k int) {
	for _, w := range m.workers {
		if w.task != k {
			continue
		}
		if len(m.queue) > 0 {
			w.task, m.queue = m.queue[0], m.queue[1:]
			return
		}
		w.task = -1
		w.timed = len(m.workers) > m.core
		if w.timed && m.keepAlive == 0 {
			m.exit(w)
			return
		}
		w.expiry = m.now + m.keepAlive
		m.idle = append(m.idle, w)
		return
	}
}

func (m *poolModel) exit(w *modelWorker) {
	m.workers = slices.DeleteFunc(m.workers, func(x *modelWorker) bool { return x == w })
	m.idle = slices.DeleteFunc(m.idle, func(x *modelWorker) bool { return x == w })
}

// sleep lets d pass: each timed idle worker whose keep-alive ends exits if the pool is above
// its core size, else waits on without a deadline, as the newest idle worker.
func (m *poolModel) sleep(d time.Duration) {
	end := m.now + d
	for {
		next := time.Duration(-1)
		for _, w := range m.idle {
			if w.timed && w.expiry <= end && (next < 0 || w.expiry < next) {
				next = w.expiry
			}
		}
		if next < 0 {
			break
		}
		m.now = next
		var expired []*modelWorker
		for _, w := range m.idle {
			if w.timed && w.expiry == next {
				expired = append(expired, w)
			}
		}
		for _, w := range expired {
			if len(m.workers) > m.core {
				m.exit(w)
				continue
			}
			w.timed = false
			m.idle = slices.DeleteFunc(m.idle, func(x *modelWorker) bool { return x == w })
			m.idle = append(m.idle, w)
		}
	}
	m.now = end
}

// realTask is one submitted task of the real pool.
type realTask struct {
	gate    chan struct{}
	future  *async.Future[int]
	started bool
	ended   bool
}

// TestWorkerPoolMatchesModel drives a pool with random submissions, task completions and
// cancellations (running and queued) and the passing of time, and checks after every step that
// its admissions, its metrics and the set of tasks running are the model's.
func TestWorkerPoolMatchesModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			m := &poolModel{core: rapid.IntRange(1, 3).Draw(rt, "core")}
			m.max = m.core + rapid.IntRange(0, 2).Draw(rt, "extra")
			m.queueCap = rapid.IntRange(0, 3).Draw(rt, "queue")
			m.keepAlive = time.Duration(rapid.IntRange(0, 3).Draw(rt, "keepAlive10ms")) * 10 * time.Millisecond
			cfg := async.WorkerPoolConfig{
				CoreThreadPoolSize: m.core, MaxThreadPoolSize: m.max,
				QueueCapacity: m.queueCap, KeepAliveDuration: m.keepAlive,
			}
			if m.queueCap == 0 {
				cfg.QueueCapacity = async.NoQueue
			}
			if m.keepAlive == 0 {
				cfg.KeepAliveDuration = async.NoKeepAlive
			}
			pool, err := async.NewWorkerPool("model", cfg)
			if err != nil {
				rt.Fatal(err)
			}
			var tasks []*realTask
			started := make(chan int, 1024)
			defer func() {
				for _, task := range tasks {
					task.future.Cancel()
				}
				if err := pool.Close(); err != nil {
					rt.Fatal(err)
				}
				if got := pool.Metrics(); got.ThreadPoolSize != 0 || got.ActiveThreadCount != 0 || got.QueueDepth != 0 {
					rt.Fatalf("after Close: %+v", got)
				}
			}()

			check := func() {
				synctest.Wait()
				for len(started) > 0 {
					tasks[<-started].started = true
				}
				var running []int
				for k, task := range tasks {
					if task.future == nil || task.ended {
						continue
					}
					if _, done := task.future.Result(); done {
						task.ended = true
						continue
					}
					if task.started {
						running = append(running, k)
					}
				}
				if want := m.running(); !slices.Equal(running, want) {
					rt.Fatalf("tasks running %v, model %v", running, want)
				}
				want := async.WorkerPoolMetrics{
					CoreThreadPoolSize: m.core, MaximumThreadPoolSize: m.max,
					ThreadPoolSize: len(m.workers), ActiveThreadCount: len(m.running()),
					AvailableThreadCount: m.max - len(m.running()), QueueDepth: len(m.queue),
					QueueCapacity: m.queueCap, RemainingQueueCapacity: m.queueCap - len(m.queue),
				}
				if got := pool.Metrics(); got != want {
					rt.Fatalf("metrics %+v, model %+v", got, want)
				}
			}

			running := func(rt *rapid.T) int {
				r := m.running()
				if len(r) == 0 {
					rt.Skip("nothing running")
				}
				return rapid.SampledFrom(r).Draw(rt, "task")
			}

			rt.Repeat(map[string]func(*rapid.T){
				"Submit": func(rt *rapid.T) {
					k := len(tasks)
					task := &realTask{gate: make(chan struct{})}
					tasks = append(tasks, task)
					f, err := async.Submit(context.Background(), pool, nil, func(ctx context.Context) (int, error) {
						started <- k
						select {
						case <-task.gate:
							return k, nil
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					})
					admitted := m.submit(k)
					if admitted != (err == nil) {
						rt.Fatalf("task %d: admitted %v, model %v (err %v)", k, err == nil, admitted, err)
					}
					if err != nil && !errors.Is(err, bulkhead.ErrBulkheadFull) {
						rt.Fatalf("task %d: %v", k, err)
					}
					task.future = f
					check()
				},
				"Finish": func(rt *rapid.T) {
					k := running(rt)
					close(tasks[k].gate)
					m.finish(k)
					check()
				},
				"CancelRunning": func(rt *rapid.T) {
					k := running(rt)
					tasks[k].future.Cancel()
					m.finish(k)
					check()
				},
				"CancelQueued": func(rt *rapid.T) {
					if len(m.queue) == 0 {
						rt.Skip("nothing queued")
					}
					k := rapid.SampledFrom(m.queue).Draw(rt, "task")
					tasks[k].future.Cancel()
					m.queue = slices.DeleteFunc(m.queue, func(j int) bool { return j == k })
					check()
					if _, err := tasks[k].future.Get(context.Background()); !errors.Is(err, context.Canceled) {
						rt.Fatalf("cancelled queued task %d: %v", k, err)
					}
				},
				"Sleep": func(rt *rapid.T) {
					d := time.Duration(rapid.IntRange(1, 40).Draw(rt, "ms")) * time.Millisecond
					time.Sleep(d)
					m.sleep(d)
					check()
				},
			})
		})
	})
}
