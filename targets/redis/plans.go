package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/racelab/racelab/targets/story"
)

// downloadScript grants an original when the plan is paid and the day's
// count is under the limit, reading both and counting in one step on the
// server: a cancel is either before it, and refuses it, or after it.
//
// KEYS[1] plan key; KEYS[2] downloads key; ARGV[1] day; ARGV[2] limit;
// ARGV[3] the downloads key's lifetime in milliseconds. Answers {granted
// (0 or 1), count}: count 0 when the plan refused it.
var downloadScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= 'paid' then return {0, 0} end
local key = KEYS[2]` + takeOneLua)

// Subscribe starts subscriber's paid plan.
func (s *Store) Subscribe(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Paid)
}

// Cancel ends subscriber's plan in the store. The naive strategy's cache
// is left as it is: the cancel is the payment provider's webhook, which
// reaches another server, so a read cached here goes on saying "paid"
// until it expires.
func (s *Store) Cancel(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Cancelled)
}

func (s *Store) setPlan(ctx context.Context, subscriber, state string) error {
	key := planKey(subscriber)
	if err := s.redis().Set(ctx, key, state, RecordTTL).Err(); err != nil {
		return fmt.Errorf("plan %s: %w", key, err)
	}
	return nil
}

// Paid reads the plan as a page does: through the naive strategy's cache,
// straight from the server on the others.
func (s *Store) Paid(ctx context.Context, subscriber string) (bool, error) {
	paid, err := s.base.Plans.Read(ctx, subscriber, func(ctx context.Context) (bool, error) {
		return readPlan(ctx, s.redis(), planKey(subscriber))
	})
	if err != nil {
		return false, fmt.Errorf("plan %s: %w", planKey(subscriber), err)
	}
	return paid, nil
}

// readPlan says whether the plan at key is paid; a missing plan is not.
func readPlan(ctx context.Context, r goredis.Cmdable, key string) (bool, error) {
	v, err := r.Get(ctx, key).Result()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	}
	return v == story.Paid, err
}

// Download grants an original when the plan is paid and the day's count
// is under limit, and counts it: one Lua call (atomic); the plan and the
// count read and the count written under WATCH of both, retried (watch);
// or the plan read through the cache, then GET, decide in Go and write
// (naive).
func (s *Store) Download(ctx context.Context, subscriber string, limit int64) (granted bool, count int64, err error) {
	pkey, key := planKey(subscriber), downloadsKey(subscriber)
	day, ttl := s.day()
	switch s.base.Config.Strategy {
	case StrategyAtomic:
		granted, count, err = runTakeOne(ctx, s.redis(), downloadScript, []string{pkey, key}, day, limit, ttl)
		if err != nil {
			return false, 0, fmt.Errorf("download %s: %w", key, err)
		}
		return granted, count, nil
	case StrategyNaive:
		paid, err := s.Paid(ctx, subscriber)
		if err != nil || !paid {
			return false, 0, err
		}
	}
	err = s.readThenWriteKeys(ctx, []string{pkey, key}, func(r goredis.Cmdable) (w write, err error) {
		granted, count = false, 0
		if s.base.Config.Strategy != StrategyNaive {
			if paid, err := readPlan(ctx, r, pkey); err != nil || !paid {
				return nil, err
			}
		}
		granted, count, w, err = takeOne(ctx, r, key, day, limit, ttl)
		return w, err
	})
	if err != nil {
		return false, 0, fmt.Errorf("download %s: %w", key, err)
	}
	return granted, count, nil
}

// Downloads reads the subscriber's count of originals today.
func (s *Store) Downloads(ctx context.Context, subscriber string) (int64, error) {
	return s.todays(ctx, "downloads", downloadsKey(subscriber))
}
