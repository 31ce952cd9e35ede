package scenarios

import (
	"fmt"
	"time"

	"github.com/racelab/racelab/scenarios/results"

	"github.com/racelab/racelab/scenarios/pace"
)

// keyCountsOf lists the keys that were sent a request, in order.
func keyCountsOf(counts []KeyTotal) []results.KeyCount {
	var out []results.KeyCount
	for k := range counts {
		c := results.KeyCount{Key: k, Allowed: counts[k].allowed.Load(), Refused: counts[k].refused.Load(), Errors: counts[k].errors.Load()}
		if c.Allowed+c.Refused+c.Errors > 0 {
			out = append(out, c)
		}
	}
	return out
}

// partOf is shard index's part of total split over of shards, as evenly
// as possible: the parts add up to total exactly.
func partOf(total int64, index, of int) int64 {
	return (int64(index)+1)*total/int64(of) - int64(index)*total/int64(of)
}

// share is the load this shard sends: its part of the workers, of the
// requests, or of every rate of the schedule, from its own seed (so that
// shards pick different keys and Poisson gaps). The result keeps the
// whole plan's figures; only the sending is shared.
func (p *LoadPlan) share(rs []Resolved) (*LoadPlan, error) {
	sh := p.Sharding
	switch {
	case len(rs) != 1:
		return nil, fmt.Errorf("%w: a sharded load takes exactly one target (-t); shard one load per target", results.ErrUsage)
	case !Shareable(rs[0].spec, rs[0].entry):
		return nil, errNotShareable(rs[0].spec.Name())
	case sh.Index < 0 || sh.Of < 1 || sh.Index >= sh.Of:
		return nil, fmt.Errorf("%w: shard %d of %d; want 0 to %d", results.ErrUsage, sh.Index, sh.Of, sh.Of-1)
	case p.Requests > 0 && p.Requests < int64(sh.Of):
		return nil, fmt.Errorf("%w: %d shards cannot share --requests %d; give each shard at least one", results.ErrUsage, sh.Of, p.Requests)
	case p.Schedule == nil && p.Concurrency < sh.Of:
		return nil, fmt.Errorf("%w: %d shards cannot share --concurrency %d; give each shard at least one worker", results.ErrUsage, sh.Of, p.Concurrency)
	}
	if err := CheckRunID(sh.RunID); err != nil {
		return nil, err
	}
	q := *p
	q.Seed = p.Seed + int64(sh.Index)*1_000_003
	if p.Requests > 0 {
		q.Requests = partOf(p.Requests, sh.Index, sh.Of)
	}
	if p.Schedule == nil {
		q.Concurrency = int(partOf(int64(p.Concurrency), sh.Index, sh.Of))
		return &q, nil
	}
	of := pace.Rate(sh.Of)
	s := *p.Schedule
	s.Start /= of
	s.Stages = make([]pace.Stage, len(p.Schedule.Stages))
	for i, st := range p.Schedule.Stages {
		s.Stages[i] = pace.Stage{Duration: st.Duration, Target: st.Target / of}
	}
	q.Schedule = &s
	q.MaxInFlight = max(1, int(partOf(int64(p.MaxInFlight), sh.Index, sh.Of)))
	if s.Spacing == pace.Even {
		// Shard i starts i arrivals of the whole rate late, so that the
		// shards' even arrivals fall between each other's, as one
		// process's would, rather than N at a time.
		first := p.Schedule.Start
		if first <= 0 && len(p.Schedule.Stages) > 0 {
			first = p.Schedule.Stages[0].Target
		}
		if first > 0 {
			q.phase = time.Duration(float64(sh.Index) / float64(first) * float64(time.Second))
		}
	}
	return &q, nil
}

// checkLoadShard refuses a load part whose per-key counts do not add up
// to its own totals.
func checkLoadShard(s *results.ShardResult) error {
	l := s.Load
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shard %d: %s", ErrInconsistent, s.Shard, fmt.Sprintf(format, args...))
	}
	if len(l.Targets) != 1 {
		return bad("%d targets; a sharded load has one", len(l.Targets))
	}
	t := &l.Targets[0]
	var allowed, refused, errs int64
	last := -1
	for _, c := range t.KeyCounts {
		if c.Key <= last || c.Key >= l.Keys || c.Allowed < 0 || c.Refused < 0 || c.Errors < 0 {
			return bad("key_counts: key %d after %d, of %d keys, or a negative count", c.Key, last, l.Keys)
		}
		last = c.Key
		allowed, refused, errs = allowed+c.Allowed, refused+c.Refused, errs+c.Errors
	}
	if t.Error == "" && !l.Interrupted && (allowed != t.Allowed || refused != t.Refused || errs != t.Errors-t.Dropped) {
		return bad("the keys were told %d allowed, %d refused, %d errors; the load %d, %d, %d (%d never sent)",
			allowed, refused, errs, t.Allowed, t.Refused, t.Errors-t.Dropped, t.Dropped)
	}
	return nil
}
