package shards

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
)

// checkLoadShard refuses a load part whose per-key counts do not add up
// to its own totals.
func checkLoadShard(s *results.ShardResult) error {
	l := s.Load
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shard %d: %s", engine.ErrInconsistent, s.Shard, fmt.Sprintf(format, args...))
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

// CheckLoad checks a load document from outside (a saved result, a
// shard's part) again against what racelab and its story can produce,
// beyond the figures' own agreement (LoadResult.Check): a load has a
// target; a story whose request cannot be refused (a hit) has no refused
// answers anywhere; and the latencies are exactly what the stored
// histogram gives, in order. The error names the field; a p99 edited
// down is refused, never rendered as "threshold met".
//
// A story find does not know (a race file's load) is checked for all
// but its refusals: only the story can say what it refuses.
func CheckLoad(l *results.LoadResult, find engine.Finder) error {
	if err := l.Check(); err != nil {
		return err
	}
	switch {
	case len(l.Targets) == 0:
		return fmt.Errorf("targets: none; a load result has one per target loaded")
	case l.Keys > load.MaxLoadKeys:
		// A merge reads every key back: a forged count must not make it
		// read (and hold) a trillion.
		return fmt.Errorf("keys: %d; a load has at most %d", l.Keys, load.MaxLoadKeys)
	}
	sc, err := find(l.Scenario, nil)
	canRefuse := err != nil || sc.CanRefuse()
	for i := range l.Targets {
		t := &l.Targets[i]
		where := fmt.Sprintf("targets[%d]", i)
		if !canRefuse {
			refused := t.Refused + t.Keys.Refused.Sum + t.WorstKey.Refused
			for _, c := range t.KeyCounts {
				refused += c.Refused
			}
			if refused != 0 {
				return fmt.Errorf("%s.refused: %d refused answers; a %s request of %s is counted or fails, never refused", where, refused, sc.Op, sc.Name)
			}
		}
		if err := checkLatency(t); err != nil {
			return fmt.Errorf("%s.%w", where, err)
		}
	}
	return nil
}

// checkLatency refuses latencies that are out of order or that the
// target's own histogram does not give.
func checkLatency(t *results.LoadTarget) (err error) {
	l := t.Latency
	if l.Count > 0 && !(0 <= l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		return fmt.Errorf("latency: min %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s; want each at most the next", l.Min, l.P50, l.P90, l.P99, l.P999, l.Max)
	}
	for _, s := range t.Series {
		if !(0 <= s.P50 && s.P50 <= s.P99 && s.P99 <= s.Max) {
			return fmt.Errorf("series[%d]: p50 %s, p99 %s, max %s; want each at most the next", s.At, s.P50, s.P99, s.Max)
		}
	}
	defer func() {
		// The histogram's decoder trusts its header; a crafted one must
		// not take racelab down.
		// What the runtime said of the panic is not for the user.
		if recover() != nil {
			err = errors.New("histogram: unreadable: its counts do not fit its header; want the histogram the load saved")
		}
	}()
	h, err := load.DecodeHistogram(t.Histogram)
	if err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	want, _, bars := load.Summarize(h)
	for _, f := range []struct {
		name      string
		got, want time.Duration
	}{{"count", time.Duration(l.Count), time.Duration(want.Count)}, {"min_ns", l.Min, want.Min}, {"mean_ns", l.Mean, want.Mean},
		{"p50_ns", l.P50, want.P50}, {"p90_ns", l.P90, want.P90}, {"p99_ns", l.P99, want.P99}, {"p99_9_ns", l.P999, want.P999}, {"max_ns", l.Max, want.Max}} {
		if f.got != f.want {
			if f.name == "count" {
				return fmt.Errorf("latency.count: %d; the histogram holds %d", l.Count, want.Count)
			}
			return fmt.Errorf("latency.%s: %s; the histogram says %s", f.name, f.got, f.want)
		}
	}
	if !slices.Equal(bars, t.Buckets) {
		return fmt.Errorf("buckets: not the histogram's")
	}
	return nil
}
