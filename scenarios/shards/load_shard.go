package shards

import (
	"fmt"

	"github.com/racelab/racelab/scenarios/engine"

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
