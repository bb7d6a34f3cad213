package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// report is what one run measured.
type report struct {
	produced   int
	stored     int // results stored, duplicates included
	distinct   int // records stored at least once
	duplicates int // results stored for a record already stored
	lost       int // records never stored
	// violations counts stores out of their key's order: a record stored for the first time
	// after a later record of its key was, or, within one session, a record of a key stored
	// after a record of that key with a greater or equal sequence number.
	violations int
	// dupBySession counts each duplicate against the session that had stored the record
	// before and ended without committing past it; killedSession is the killed session.
	dupBySession  map[int]int
	killedSession int
	ends          []sessionEnd
	committedAll  bool // every partition's committed offset is its end offset

	opened, halfOpened, pauses, resumes int64
	pollsPaused, recordsPaused          int64
	orphans, failed                     int64
	commits, commitErrors               int64
	elapsed                             time.Duration
}

// tally counts what the members stored.
func (s *scenario) tally() *report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &report{produced: s.cfg.total(), stored: len(s.stores), dupBySession: map[int]int{},
		killedSession: s.killed, ends: append([]sessionEnd(nil), s.ends...)}
	tallyStores(r, s.stores)
	return r
}

func tallyStores(r *report, stores []storedRecord) {
	type id struct {
		p int32
		o int64
	}
	type sk struct {
		session int
		key     string
	}
	last := map[id]int{}          // the session that stored the record last
	firstNext := map[string]int{} // per key, the greatest sequence number stored for the first time, plus one
	inSession := map[sk]int{}     // per session and key, the last sequence number stored, plus one
	for _, st := range stores {
		k := id{st.rec.Partition, st.rec.Offset}
		if prev, ok := last[k]; ok {
			r.duplicates++
			r.dupBySession[prev]++
		} else if st.rec.Seq < firstNext[st.rec.Key] {
			r.violations++
		} else {
			firstNext[st.rec.Key] = st.rec.Seq + 1
		}
		last[k] = st.session
		ks := sk{st.session, st.rec.Key}
		if n, ok := inSession[ks]; ok && st.rec.Seq < n {
			r.violations++
		}
		inSession[ks] = st.rec.Seq + 1
	}
	r.distinct = len(last)
	r.lost = r.produced - r.distinct
}

func (r *report) add(m *member) {
	if m == nil {
		return
	}
	st := &m.stats
	r.opened += st.opened.Load()
	r.halfOpened += st.halfOpened.Load()
	r.pauses += st.pauses.Load()
	r.resumes += st.resumes.Load()
	r.pollsPaused += st.pollsPaused.Load()
	r.recordsPaused += st.recordsPaused.Load()
	r.orphans += st.orphans.Load()
	r.failed += st.failed.Load()
	r.commits += st.commits.Load()
	r.commitErrors += st.commitErrors.Load()
}

// maxDup returns the most duplicates one session caused, and that session.
func (r *report) maxDup() (n, session int) {
	for s, d := range r.dupBySession {
		if d > n || (d == n && s < session) {
			n, session = d, s
		}
	}
	return n, session
}

// count returns the number of sessions that ended as how.
func (r *report) count(how endHow) int {
	n := 0
	for _, e := range r.ends {
		if e.how == how {
			n++
		}
	}
	return n
}

type check struct {
	name string
	ok   bool
}

// checks are the promises the run keeps, each exact.
func (r *report) checks() []check {
	most, _ := r.maxDup()
	return []check{
		{"lost 0", r.lost == 0 && r.distinct == r.produced},
		{"every partition committed up to its end offset", r.committedAll},
		{"per-key order violations 0", r.violations == 0},
		{fmt.Sprintf("duplicates of each session ≤ MaxUncommitted (%d)", maxUncommitted), most <= maxUncommitted},
		{"duplicates = stored − distinct", r.duplicates == r.stored-r.distinct},
		{"records polled while OPEN, after the pause and before the resume: 0", r.recordsPaused == 0},
		{"polls made while OPEN, after the pause: at least 1", r.pollsPaused >= 1},
		{"breaker opened twice at least, fetches paused each time", r.opened >= 2 && r.pauses >= 2},
		{"fetches resumed for each HALF_OPEN probe", r.halfOpened >= 2 && r.resumes >= r.halfOpened},
		{"a session killed, and one revoked by a rebalance", r.count(endKilled) == 1 && r.count(endFinished)+r.count(endDropped) >= 1},
		{"results failed for good 0, records polled with no session 0", r.failed == 0 && r.orphans == 0},
	}
}

func failed(cs []check) []string {
	var out []string
	for _, c := range cs {
		if !c.ok {
			out = append(out, c.name)
		}
	}
	return out
}

// print writes the report.
func (r *report) print(w io.Writer) {
	most, at := r.maxDup()
	fmt.Fprintf(w, "\n%d records produced, %d results stored in %.1fs\n", r.produced, r.stored, r.elapsed.Seconds())
	fmt.Fprintf(w, "  lost %d, per-key order violations %d, duplicates %d (the most from one session: %d, bound %d)\n",
		r.lost, r.violations, r.duplicates, most, maxUncommitted)
	if r.duplicates > 0 {
		ids := make([]int, 0, len(r.dupBySession))
		for s := range r.dupBySession {
			ids = append(ids, s)
		}
		sort.Ints(ids)
		parts := make([]string, 0, len(ids))
		for _, s := range ids {
			parts = append(parts, fmt.Sprintf("session %d: %d", s, r.dupBySession[s]))
		}
		fmt.Fprintf(w, "  duplicates by the session that stored them first: %s (killed: session %d)\n",
			strings.Join(parts, ", "), r.killedSession)
	}
	_ = at
	fmt.Fprintf(w, "  breaker: OPEN %d times, HALF_OPEN %d; PauseFetchPartitions %d, ResumeFetchPartitions %d\n",
		r.opened, r.halfOpened, r.pauses, r.resumes)
	fmt.Fprintf(w, "  while OPEN: %d polls, %d records returned\n", r.pollsPaused, r.recordsPaused)
	fmt.Fprintf(w, "  sessions: %d finished on revoke, %d dropped on revoke, %d lost, %d killed; %d commits, %d commit errors\n",
		r.count(endFinished), r.count(endDropped), r.count(endLost), r.count(endKilled), r.commits, r.commitErrors)
	for _, c := range r.checks() {
		mark := "✓"
		if !c.ok {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s\n", mark, c.name)
	}
}
