package circuitbreaker_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// The reference model: a direct, unoptimised transcription of Resilience4j's state machine
// plus levee's differences, kept as plain lists. Each period is its own
// mState: a permit remembers the one that granted it, and its outcome or release counts only
// there (an outcome only while that period is still the current one).

type mOutcome struct {
	second       int64
	failed, slow bool
}

type mMetrics struct {
	empty        bool // DISABLED / FORCED_OPEN: records nothing
	timeBased    bool
	size, min    int
	outcomes     []mOutcome
	notPermitted int
}

func (m *mMetrics) window(now time.Time) []mOutcome {
	if m.timeBased {
		var in []mOutcome
		for _, o := range m.outcomes {
			if o.second > now.Unix()-int64(m.size) {
				in = append(in, o)
			}
		}
		return in
	}
	return m.outcomes[max(0, len(m.outcomes)-m.size):]
}

func (m *mMetrics) snapshot(now time.Time) (c counts, fr, sr float32) {
	for _, o := range m.window(now) {
		c.buffered++
		if o.failed {
			c.failed++
		} else {
			c.successful++
		}
		if o.slow {
			c.slow++
			if o.failed {
				c.slowFailed++
			} else {
				c.slowSuccessful++
			}
		}
	}
	c.notPermitted = m.notPermitted
	if c.buffered == 0 || c.buffered < m.min {
		return c, -1, -1
	}
	pct := func(p int) float32 { return float32(float32(p)*100) / float32(c.buffered) }
	return c, pct(c.failed), pct(c.slow)
}

type mState struct {
	id       int
	kind     cb.State
	attempts int
	metrics  *mMetrics
	deadline time.Time // OPEN
	permits  int       // HALF_OPEN
	entered  time.Time
}

type model struct {
	cfg         cb.Config
	now         time.Time
	st          *mState
	ids         int
	transitions []string
	outcomes    []string // the SUCCESS, ERROR and IGNORED_ERROR events, as outcomeEvents shows them
}

// publish is the event of an outcome of a call permitted by period granted, published unless
// the current state is DISABLED or FORCED_OPEN, and late when granted is no longer current.
func (m *model) publish(typ cb.EventType, granted *mState) {
	if m.st.kind == cb.Disabled || m.st.kind == cb.ForcedOpen {
		return
	}
	e := typ.String()
	if granted != m.st {
		e += " late"
	}
	m.outcomes = append(m.outcomes, e)
}

// outcomeEvents returns the SUCCESS, ERROR and IGNORED_ERROR events, each as its type,
// followed by " late" when Late is set.
func outcomeEvents(r *events) []string {
	out := []string{}
	for _, e := range r.list() {
		switch e.Type {
		case cb.EventSuccess, cb.EventError, cb.EventIgnoredError:
			s := e.Type.String()
			if e.Late {
				s += " late"
			}
			out = append(out, s)
		}
	}
	return out
}

func (m *model) wait(a int) time.Duration {
	if m.cfg.WaitIntervalFunctionInOpenState != nil {
		return m.cfg.WaitIntervalFunctionInOpenState(a)
	}
	return m.cfg.WaitDurationInOpenState
}

func (m *model) closedMetrics() *mMetrics {
	if m.cfg.SlidingWindowType == cb.TimeBased {
		return &mMetrics{timeBased: true, size: m.cfg.SlidingWindowSize, min: m.cfg.MinimumNumberOfCalls}
	}
	return &mMetrics{size: m.cfg.SlidingWindowSize, min: min(m.cfg.MinimumNumberOfCalls, m.cfg.SlidingWindowSize)}
}

func (m *model) install(next *mState) {
	m.ids++
	next.id = m.ids
	next.entered = m.now
	if m.st != nil && m.st.kind != next.kind {
		m.transitions = append(m.transitions, m.st.kind.String()+">"+next.kind.String())
	}
	m.st = next
}

func (m *model) build(to cb.State, openFor *time.Duration) *mState {
	cur := m.st
	switch to {
	case cb.Closed:
		return &mState{kind: cb.Closed, metrics: m.closedMetrics()}
	case cb.MetricsOnly:
		return &mState{kind: cb.MetricsOnly, metrics: m.closedMetrics()}
	case cb.Open:
		if openFor != nil {
			return &mState{kind: cb.Open, attempts: cur.attempts, metrics: cur.metrics, deadline: m.now.Add(*openFor)}
		}
		a := cur.attempts + 1
		return &mState{kind: cb.Open, attempts: a, metrics: cur.metrics, deadline: m.now.Add(m.wait(a))}
	case cb.HalfOpen:
		n := m.cfg.PermittedNumberOfCallsInHalfOpenState
		return &mState{kind: cb.HalfOpen, attempts: cur.attempts, permits: n,
			metrics: &mMetrics{size: n, min: min(m.cfg.MinimumNumberOfCalls, n)}}
	case cb.Disabled:
		return &mState{kind: cb.Disabled, metrics: &mMetrics{empty: true}}
	case cb.ForcedOpen:
		return &mState{kind: cb.ForcedOpen, attempts: cur.attempts + 1, metrics: &mMetrics{empty: true}}
	}
	panic("unknown state")
}

func legal(from, to cb.State) bool {
	return !(from == cb.Closed && to == cb.HalfOpen) && !(from == cb.MetricsOnly && (to == cb.Open || to == cb.HalfOpen))
}

// advance moves the model's clock to t, firing the current period's timer on the way.
func (m *model) advance(t time.Time) {
	for {
		var due time.Time
		switch {
		case m.st.kind == cb.Open && m.cfg.AutomaticTransitionFromOpenToHalfOpenEnabled:
			due = m.st.deadline
		case m.st.kind == cb.HalfOpen && m.cfg.MaxWaitDurationInHalfOpenState > 0:
			due = m.st.entered.Add(m.cfg.MaxWaitDurationInHalfOpenState)
		default:
			m.now = t
			return
		}
		if due.After(t) {
			m.now = t
			return
		}
		if due.After(m.now) {
			m.now = due
		}
		if m.st.kind == cb.Open {
			m.install(m.build(cb.HalfOpen, nil))
		} else {
			m.install(m.build(cb.Open, nil))
		}
	}
}

func (m *model) acquire() (*mState, bool) {
	for {
		s := m.st
		switch s.kind {
		case cb.Closed, cb.Disabled, cb.MetricsOnly:
			return s, true
		case cb.HalfOpen:
			if s.permits > 0 {
				s.permits--
				return s, true
			}
		case cb.Open:
			if m.now.After(s.deadline) {
				m.install(m.build(cb.HalfOpen, nil))
				continue
			}
		}
		s.metrics.notPermitted++
		return s, false
	}
}

// record is an outcome of a call permitted by period granted. It counts only if granted is
// still the current period: an outcome from an earlier period (a late one) is recorded
// nowhere and moves nothing, so OPEN, which grants no permit, never records either.
func (m *model) record(granted *mState, failed, slow bool) {
	s := m.st
	if granted != s || s.metrics.empty {
		return
	}
	s.metrics.outcomes = append(s.metrics.outcomes, mOutcome{m.now.Unix(), failed, slow})
	_, fr, sr := s.metrics.snapshot(m.now)
	if fr < 0 {
		return
	}
	exceeded := fr >= m.cfg.FailureRateThreshold || sr >= m.cfg.SlowCallRateThreshold
	switch {
	case s.kind == cb.Closed && exceeded, s.kind == cb.HalfOpen && exceeded:
		m.install(m.build(cb.Open, nil))
	case s.kind == cb.HalfOpen:
		m.install(m.build(cb.Closed, nil))
	}
}

func (m *model) release(granted *mState) {
	if granted == m.st && granted.kind == cb.HalfOpen {
		granted.permits++
	}
}

func drawConfig(t *rapid.T) cb.Config {
	cfg := cb.Config{
		SlidingWindowType:                            rapid.SampledFrom([]cb.SlidingWindowType{cb.CountBased, cb.TimeBased}).Draw(t, "type"),
		SlidingWindowSize:                            rapid.IntRange(1, 6).Draw(t, "size"),
		MinimumNumberOfCalls:                         rapid.IntRange(1, 8).Draw(t, "minCalls"),
		FailureRateThreshold:                         rapid.SampledFrom([]float32{25, 50, 66.666664, 75, 100}).Draw(t, "failureRateThreshold"),
		SlowCallRateThreshold:                        rapid.SampledFrom([]float32{50, 100}).Draw(t, "slowCallRateThreshold"),
		SlowCallDurationThreshold:                    100 * time.Millisecond,
		PermittedNumberOfCallsInHalfOpenState:        rapid.IntRange(1, 4).Draw(t, "permitted"),
		AutomaticTransitionFromOpenToHalfOpenEnabled: rapid.Bool().Draw(t, "auto"),
		MaxWaitDurationInHalfOpenState:               rapid.SampledFrom([]time.Duration{0, 3 * time.Second}).Draw(t, "maxWait"),
		IgnoreErrors:                                 []error{errInvalid},
	}
	if rapid.Bool().Draw(t, "intervalFunction") {
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { return time.Duration(a) * time.Second }
	} else {
		cfg.WaitDurationInOpenState = 2 * time.Second
	}
	return cfg
}

// TestPropertyStateMachineMatchesModel drives a breaker with random calls, outcomes, durations,
// permit operations, manual transitions and clock advances, and compares state, metrics, the
// sequence of transitions and the outcome events (late or not) with the model after every
// step. Calls that span a transition (a long Execute, a held permit) make late outcomes.
func TestPropertyStateMachineMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			cfg := drawConfig(rt)
			b, err := cb.New("model", cfg)
			require.NoError(rt, err)
			ev := record(b) // timers publish from their own goroutines

			m := &model{cfg: cfg, now: time.Now()}
			m.install(m.build(cb.Closed, nil))

			sleep := func(d time.Duration) {
				time.Sleep(d)
				synctest.Wait() // let timers that fired run before anything else happens
				m.advance(time.Now())
			}
			type heldPermit struct {
				p       cb.Permit
				granted *mState
				start   time.Time
				done    bool
			}
			var held []*heldPermit
			steps := rapid.IntRange(1, 60).Draw(rt, "steps")
			for i := range steps {
				op := rapid.IntRange(0, 9).Draw(rt, "op")
				var desc string
				switch op {
				case 0, 1, 2: // a call through Execute
					kind := rapid.SampledFrom([]string{"success", "failure", "ignored", "cancel", "panic"}).Draw(rt, "kind")
					d := rapid.SampledFrom([]time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 1500 * time.Millisecond}).Draw(rt, "duration")
					desc = fmt.Sprintf("Execute %s %v", kind, d)
					granted, permitted := m.acquire()
					ctx, cancel := context.WithCancel(context.Background())
					ran := false
					_, err := cb.Execute(ctx, b, func(ctx context.Context) (int, error) {
						ran = true
						sleep(d)
						switch kind {
						case "failure":
							return 0, errBoom
						case "ignored":
							return 0, errInvalid
						case "cancel":
							cancel()
							return 0, ctx.Err()
						case "panic":
							panic("kaboom")
						}
						return 1, nil
					})
					cancel()
					require.Equal(rt, permitted, ran, "step %d %s: permitted", i, desc)
					if !permitted {
						require.ErrorIs(rt, err, cb.ErrCallNotPermitted)
						break
					}
					switch kind {
					case "success":
						m.publish(cb.EventSuccess, granted)
						m.record(granted, false, d > cfg.SlowCallDurationThreshold)
					case "failure", "panic":
						m.publish(cb.EventError, granted)
						m.record(granted, true, d > cfg.SlowCallDurationThreshold)
					case "ignored":
						m.publish(cb.EventIgnoredError, granted)
						m.release(granted)
					case "cancel":
						m.release(granted)
					}
				case 3: // a permit taken and held
					desc = "Acquire"
					granted, permitted := m.acquire()
					p, err := b.Acquire()
					require.Equal(rt, permitted, err == nil, "step %d %s", i, desc)
					if permitted {
						held = append(held, &heldPermit{p: p, granted: granted, start: m.now})
					}
				case 4: // an outcome on a held permit, possibly late, possibly its second
					if len(held) == 0 {
						desc = "no permit held"
						break
					}
					h := held[rapid.IntRange(0, len(held)-1).Draw(rt, "permit")]
					kind := rapid.SampledFrom([]string{"success", "failure", "ignored"}).Draw(rt, "outcome")
					slow := m.now.Sub(h.start) > cfg.SlowCallDurationThreshold
					desc = fmt.Sprintf("Permit %s slow=%v done=%v", kind, slow, h.done)
					switch kind {
					case "success":
						h.p.OnSuccess()
					case "failure":
						h.p.OnError(errBoom)
					case "ignored":
						h.p.OnError(errInvalid)
					}
					// A HALF_OPEN probe completes once; other permits record every outcome.
					if !h.done || h.granted.kind != cb.HalfOpen {
						switch kind {
						case "ignored":
							m.publish(cb.EventIgnoredError, h.granted)
							m.release(h.granted)
						case "failure":
							m.publish(cb.EventError, h.granted)
							m.record(h.granted, true, slow)
						default:
							m.publish(cb.EventSuccess, h.granted)
							m.record(h.granted, false, slow)
						}
					}
					h.done = true
				case 5:
					if len(held) == 0 {
						desc = "no permit held"
						break
					}
					h := held[rapid.IntRange(0, len(held)-1).Draw(rt, "permit")]
					desc = fmt.Sprintf("Permit Release done=%v", h.done)
					h.p.Release()
					if !h.done {
						m.release(h.granted)
					}
					h.done = true
				case 6, 7:
					d := time.Duration(rapid.IntRange(0, 5000).Draw(rt, "sleepMs")) * time.Millisecond
					desc = fmt.Sprintf("sleep %v", d)
					sleep(d)
				case 8: // manual transition
					to := rapid.SampledFrom(allStates).Draw(rt, "to")
					desc = "TransitionTo " + to.String()
					err := transitionTo(b, to)
					if legal(m.st.kind, to) {
						require.NoError(rt, err, "step %d %s", i, desc)
						m.install(m.build(to, nil))
					} else {
						require.ErrorIs(rt, err, cb.ErrIllegalStateTransition, "step %d %s", i, desc)
					}
				case 9:
					if rapid.Bool().Draw(rt, "reset") {
						desc = "Reset"
						b.Reset()
						m.install(m.build(cb.Closed, nil))
						m.st.attempts = 0
						break
					}
					d := time.Duration(rapid.IntRange(0, 3000).Draw(rt, "openForMs")) * time.Millisecond
					desc = fmt.Sprintf("TransitionToOpenStateFor %v", d)
					err := b.TransitionToOpenStateFor(d)
					if legal(m.st.kind, cb.Open) {
						require.NoError(rt, err)
						m.install(m.build(cb.Open, &d))
					} else {
						require.ErrorIs(rt, err, cb.ErrIllegalStateTransition)
					}
				}
				synctest.Wait()
				m.advance(time.Now()) // a period entered with its wait already over fires at once
				c, fr, sr := m.st.metrics.snapshot(m.now)
				got := b.Metrics()
				require.Equal(rt, m.st.kind, b.State(), "step %d after %s", i, desc)
				require.Equal(rt, m.st.kind, got.State, "step %d after %s", i, desc)
				require.Equal(rt, c, countsOf(got), "step %d after %s", i, desc)
				require.Equal(rt, fr, got.FailureRate, "step %d after %s", i, desc)
				require.Equal(rt, sr, got.SlowCallRate, "step %d after %s", i, desc)
				require.Equal(rt, append([]string{}, m.transitions...), ev.transitions(), "step %d after %s", i, desc)
				require.Equal(rt, append([]string{}, m.outcomes...), outcomeEvents(ev), "step %d after %s", i, desc)
			}
			// Stop whatever timer the last period armed so the bubble can end promptly.
			b.Reset()
		})
	})
}
