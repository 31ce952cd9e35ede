package redis

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// The subscription story's keys: the plan, "paid" or "cancelled", and the
// day's count of originals, a hash of day and count as the quota's is.
func planKey(subscriber string) string      { return KeyPrefix + "plan:" + subscriber }
func downloadsKey(subscriber string) string { return KeyPrefix + "downloads:" + subscriber }

// The plan a paid subscription holds, and a cancelled one.
const (
	planPaid      = "paid"
	planCancelled = "cancelled"
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
local s = redis.call('HMGET', KEYS[2], 'day', 'count')
local n = 0
if s[1] == ARGV[1] then n = tonumber(s[2]) or 0 end
if n >= tonumber(ARGV[2]) then return {0, n} end
n = n + 1
redis.call('HSET', KEYS[2], 'day', ARGV[1], 'count', n)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1, n}
`)

// Subscribe starts subscriber's paid plan.
func (s *Store) Subscribe(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, planPaid)
}

// Cancel ends subscriber's plan in the store. The naive strategy's cache
// is left as it is: the cancel is the payment provider's webhook, which
// reaches another server, so a read cached here goes on saying "paid"
// until it expires.
func (s *Store) Cancel(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, planCancelled)
}

func (s *Store) setPlan(ctx context.Context, subscriber, plan string) error {
	key := planKey(subscriber)
	if err := s.redis().Set(ctx, key, plan, RecordTTL).Err(); err != nil {
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
	return v == planPaid, err
}

// Download grants an original when the plan is paid and the day's count
// is under limit, and counts it: one Lua call (atomic); the plan and the
// count read and the count written under WATCH of both, retried (watch);
// or the plan read through the cache, then GET, decide in Go and write
// (naive).
func (s *Store) Download(ctx context.Context, subscriber string, limit int64) (granted bool, count int64, err error) {
	plan, key := planKey(subscriber), downloadsKey(subscriber)
	day, ttl := s.day()
	switch s.base.Config.Strategy {
	case StrategyAtomic:
		got, err := downloadScript.Run(ctx, s.redis(), []string{plan, key}, day, limit, ttl.Milliseconds()).Int64Slice()
		if err != nil {
			return false, 0, fmt.Errorf("download %s: %w", key, err)
		}
		if len(got) != 2 {
			return false, 0, fmt.Errorf("download %s: script answered %v, want [granted count]", key, got)
		}
		return got[0] == 1, got[1], nil
	case StrategyNaive:
		paid, err := s.Paid(ctx, subscriber)
		if err != nil || !paid {
			return false, 0, err
		}
	}
	err = s.readThenWriteKeys(ctx, []string{plan, key}, func(r goredis.Cmdable) (w write, err error) {
		granted, count = false, 0
		if s.base.Config.Strategy != StrategyNaive {
			if paid, err := readPlan(ctx, r, plan); err != nil || !paid {
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
	day, _ := s.day()
	n, err := dayCount(ctx, s.redis(), downloadsKey(subscriber), day)
	if err != nil {
		return 0, fmt.Errorf("downloads %s: %w", downloadsKey(subscriber), err)
	}
	return n, nil
}
