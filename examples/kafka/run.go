package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/levee-go/levee/circuitbreaker"
)

// config is one run of the scenario.
type config struct {
	brokers    []string // a real cluster's seed brokers; nil: an in-process kfake broker
	partitions int32
	keys       int
	batches    [4]int // records produced at the start, with the second member, before the kill, after the restart
	outageAt   int    // records stored at which the downstream starts failing
	joinAt     int    // records stored (and the outage over) at which the second member joins
	killAfter  int    // records the first member's second session stores before it is killed
	work       time.Duration
	// revokeDrain bounds the time a revoked session finishes the records handed to it; past
	// it they are dropped, left uncommitted and redelivered to the partitions' next owner.
	// 0 drops them at once.
	revokeDrain time.Duration
	timeout     time.Duration // bound on the whole run
}

// defaultConfig is the program's: 2,100 records of 40 keys over 6 partitions.
func defaultConfig() config {
	return config{
		partitions: 6, keys: 40,
		batches:  [4]int{600, 600, 600, 300},
		outageAt: 150, joinAt: 400, killAfter: 80,
		work:        500 * time.Microsecond,
		revokeDrain: 5 * time.Second,
		timeout:     50 * time.Second,
	}
}

func (c config) total() int { return c.batches[0] + c.batches[1] + c.batches[2] + c.batches[3] }

// errFlaky is the downstream's failure.
var errFlaky = errors.New("downstream unavailable")

// flakyEvery makes every flakyEvery-th call fail once, a transient failure the retry absorbs.
const flakyEvery = 41

// service is the flaky downstream every record is handled by: it fails while down and, once
// in flakyEvery calls, on its own.
type service struct {
	work  time.Duration
	calls atomic.Int64
	down  atomic.Bool
}

func (s *service) handle(ctx context.Context, _ record) (struct{}, error) {
	n := s.calls.Add(1)
	if s.down.Load() || n%flakyEvery == 0 {
		return struct{}{}, errFlaky
	}
	t := time.NewTimer(s.work)
	defer t.Stop()
	select {
	case <-t.C:
		return struct{}{}, nil
	case <-ctx.Done():
		return struct{}{}, ctx.Err()
	}
}

// How a session ended.
type endHow string

const (
	endFinished endHow = "revoked, in-flight records finished"
	endDropped  endHow = "revoked, in-flight records dropped"
	endLost     endHow = "lost"
	endKilled   endHow = "killed"
)

// storedRecord is one result stored: the side effect that a duplicate repeats.
type storedRecord struct {
	rec     record
	member  string
	session int
}

// sessionEnd is how one session ended and what it had stored.
type sessionEnd struct {
	member  string
	session int
	how     endHow
	stored  int64
}

// scenario is one run: the broker, the topic, the downstream, the members and everything
// they stored.
type scenario struct {
	cfg     config
	brokers []string
	topic   string
	group   string
	svc     *service
	w       io.Writer
	start   time.Time

	logMu sync.Mutex // serialises the lines written to w

	mu       sync.Mutex
	stores   []storedRecord
	sessions int
	ends     []sessionEnd
	outage   bool // the downstream is down, or was and has not healed yet
	opens    int  // OPEN transitions during the outage
	healed   bool
	victim   *session // the session whose killAfter-th store kills its member
	victimAt int64
	killed   int // the killed session's id
	kill     chan struct{}
}

func (s *scenario) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.w, "%6.2fs  %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

func (s *scenario) nextSession() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions++
	return s.sessions
}

func (s *scenario) store(m *member, ss *session, r record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stores = append(s.stores, storedRecord{rec: r, member: m.name, session: ss.id})
	if ss == s.victim && ss.stored.Load()+1 == s.victimAt {
		select {
		case s.kill <- struct{}{}:
		default:
		}
	}
}

func (s *scenario) storedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.stores)
}

func (s *scenario) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[[2]int64]bool, len(s.stores))
	for _, st := range s.stores {
		seen[[2]int64{int64(st.rec.Partition), st.rec.Offset}] = true
	}
	return len(seen)
}

// opened is called on each OPEN transition of a member's breaker: the second during the
// outage heals the downstream, so that the first HALF_OPEN probe fails and the second
// succeeds.
func (s *scenario) opened(m *member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.outage || s.healed {
		return
	}
	s.opens++
	s.logf("%s breaker OPEN (%d): fetches of %s paused", m.name, s.opens, m.name)
	if s.opens == 2 {
		s.healed = true
		s.svc.down.Store(false)
		s.logf("downstream healthy again")
	}
}

func (s *scenario) sessionEnded(m *member, ss *session, how endHow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ends = append(s.ends, sessionEnd{member: m.name, session: ss.id, how: how, stored: ss.stored.Load()})
	s.logf("%s session %d ended: %s, %d stored", m.name, ss.id, how, ss.stored.Load())
}

// run runs the scenario and measures it.
func run(ctx context.Context, cfg config, w io.Writer) (*report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	s := &scenario{
		cfg: cfg, svc: &service{work: cfg.work}, w: w, start: time.Now(),
		kill: make(chan struct{}, 1),
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	s.topic, s.group = "orders-"+stamp, "pricing-"+stamp
	s.brokers = cfg.brokers
	if len(s.brokers) == 0 {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return nil, fmt.Errorf("kfake: %w", err)
		}
		defer c.Close()
		s.brokers = c.ListenAddrs()
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.DefaultProduceTopic(s.topic))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, cfg.partitions, -1, nil, s.topic); err != nil {
		return nil, fmt.Errorf("creating topic %s: %w", s.topic, err)
	}
	if len(cfg.brokers) > 0 {
		defer func() {
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			_, _ = adm.DeleteTopics(dctx, s.topic)
			_, _ = adm.DeleteGroup(dctx, s.group)
		}()
	}
	s.logf("topic %s: %d partitions; group %s; %d records of %d keys to come",
		s.topic, cfg.partitions, s.group, cfg.total(), cfg.keys)

	seqs := make([]int, cfg.keys)
	next := 0
	produce := func(n int) error {
		recs := make([]*kgo.Record, 0, n)
		for i := 0; i < n; i++ {
			k := next % cfg.keys
			next++
			recs = append(recs, &kgo.Record{Key: []byte(keyName(k)), Value: []byte(strconv.Itoa(seqs[k]))})
			seqs[k]++
		}
		if err := admin.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("producing: %w", err)
		}
		s.logf("produced %d records (%d in all)", n, next)
		return nil
	}

	var members []*member
	defer func() { stopAll(members) }()
	start := func(name string) (*member, error) {
		m, err := newMember(s, name)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
		s.logf("%s started", name)
		return m, nil
	}
	has := func(m *member) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.cur != nil
	}

	if err := produce(cfg.batches[0]); err != nil {
		return nil, err
	}
	a, err := start("consumer-1")
	if err != nil {
		return nil, err
	}
	var b, a2 *member
	phase := 0
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var lastCheck time.Time
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("phase %d, %d records stored: %w", phase, s.storedCount(), ctx.Err())
		case <-s.kill:
			s.mu.Lock()
			s.killed = s.victim.id
			s.mu.Unlock()
			s.logf("consumer-1 killed: sessions cancelled, nothing committed")
			a.kill()
			if a2, err = start("consumer-1-restarted"); err != nil {
				return nil, err
			}
			phase = 4
			continue
		case <-tick.C:
		}
		switch phase {
		case 0:
			if s.storedCount() >= cfg.outageAt {
				s.mu.Lock()
				s.outage = true
				s.svc.down.Store(true)
				s.mu.Unlock()
				s.logf("%d records stored: downstream failing", s.storedCount())
				phase = 1
			}
		case 1:
			s.mu.Lock()
			healed := s.healed
			s.mu.Unlock()
			if healed && a.cb.State() == circuitbreaker.Closed && s.storedCount() >= cfg.joinAt {
				if err := produce(cfg.batches[1]); err != nil {
					return nil, err
				}
				if b, err = start("consumer-2"); err != nil {
					return nil, err
				}
				phase = 2
			}
		case 2:
			if b.stats.assignments.Load() >= 1 && a.stats.assignments.Load() >= 2 && has(a) && has(b) {
				a.mu.Lock()
				victim := a.cur
				a.mu.Unlock()
				s.mu.Lock()
				s.victim, s.victimAt = victim, victim.stored.Load()+int64(cfg.killAfter)
				s.mu.Unlock()
				if err := produce(cfg.batches[2]); err != nil {
					return nil, err
				}
				phase = 3 // the kill comes from the victim's store
			}
		case 4:
			if a2.stats.assignments.Load() >= 1 && has(a2) && has(b) {
				if err := produce(cfg.batches[3]); err != nil {
					return nil, err
				}
				phase = 5
			}
		case 5:
			if s.distinct() < cfg.total() || time.Since(lastCheck) < 50*time.Millisecond {
				continue
			}
			lastCheck = time.Now()
			ok, err := committedAll(ctx, adm, s.topic, s.group)
			if err != nil {
				return nil, err
			}
			done = ok
		}
	}
	s.logf("every record stored and every offset committed: stopping")
	stopAll(members)
	members = nil
	rep := s.tally()
	rep.elapsed = time.Since(s.start)
	var err2 error
	rep.committedAll, err2 = committedAll(ctx, adm, s.topic, s.group)
	if err2 != nil {
		return nil, err2
	}
	for _, m := range []*member{a, b, a2} {
		rep.add(m)
	}
	return rep, nil
}

// stopAll stops the members still running, all at once, so that the group does not
// rebalance onto the last one.
func stopAll(members []*member) {
	var wg sync.WaitGroup
	for _, m := range members {
		if !m.killed.Load() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.stop()
			}()
		}
	}
	wg.Wait()
}

func keyName(k int) string { return fmt.Sprintf("k%02d", k) }

// decode reads the record the producer wrote.
func decode(kr *kgo.Record) (record, error) {
	seq, err := strconv.Atoi(string(kr.Value))
	if err != nil {
		return record{}, fmt.Errorf("record %d/%d: %w", kr.Partition, kr.Offset, err)
	}
	return record{Partition: kr.Partition, Offset: kr.Offset, Epoch: kr.LeaderEpoch, Key: string(kr.Key), Seq: seq}, nil
}

// committedAll reports whether the group's committed offset of every partition is the
// partition's end offset.
func committedAll(ctx context.Context, adm *kadm.Client, topic, group string) (bool, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("listing end offsets: %w", err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return false, fmt.Errorf("fetching committed offsets: %w", err)
	}
	ok := true
	ends.Each(func(e kadm.ListedOffset) {
		c, found := committed.Lookup(topic, e.Partition)
		if !found || c.Err != nil || c.At != e.Offset {
			ok = false
		}
	})
	return ok, nil
}
