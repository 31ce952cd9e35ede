package actor

import (
	"context"
	"fmt"

	"github.com/racelab/racelab/targets/story"
)

// countKey is where a capped count's object keeps its count.
const countKey = "count"

var _ story.Capped = (*Store)(nil)

// Take is one request of op, an op of a story's own (story.Capped), in
// the object that owns op's key: granted and counted while the count is
// below limit, refused uncounted at it. The object reads, compares and
// writes in one delivery, as for every story; under await-fetch the await
// comes between the read and the write, and requests interleave.
func (s *Store) Take(ctx context.Context, op story.Op, key string, limit int64) (bool, int64, error) {
	if err := s.reach(ctx, string(op), key); err != nil {
		return false, 0, err
	}
	g, err := call(ctx, s, s.cappedAddress(op, key), func(o *object, reply func(grant)) {
		n, open := load[int64](o, countKey)
		if !open {
			return
		}
		o.record(ctx, story.OpRead, itoa(n), "")
		takeBelow(ctx, o, n, limit, func(o *object, n int64) (string, bool) {
			return "", o.save(countKey, n)
		}, reply)
	})
	if err != nil {
		return false, 0, fmt.Errorf("%s %q: %w", op, key, err)
	}
	return g.granted, g.count, nil
}

// Taken reads op's count on key, 0 if it has none.
func (s *Store) Taken(ctx context.Context, op story.Op, key string) (int64, error) {
	n, err := read(ctx, s, s.cappedAddress(op, key), countKey, itoa)
	if err != nil {
		return 0, fmt.Errorf("%s count of %q: %w", op, key, err)
	}
	return n, nil
}

// cappedAddress is the object of op's key. Each op is a namespace of its
// own, like a story's; the op is remembered so that Forget finds its
// objects. An op is a word with no colon (story.OpSpec.Check), so
// "reserve:gala" names one object only.
func (s *Store) cappedAddress(op story.Op, key string) address {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capped == nil {
		s.capped = map[story.Op]bool{}
	}
	s.capped[op] = true
	return address{capped, string(op) + ":" + key}
}
