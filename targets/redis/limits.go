package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/racelab/racelab/targets/story"
)

// windowKey is a caller's window count: racelab:rl:{caller}:{window}.
func windowKey(caller string, n int64) string {
	return KeyPrefix + "rl:" + caller + ":" + strconv.FormatInt(n, 10)
}

// stockKey counts the claims on an item of more than one copy.
func stockKey(item string) string { return KeyPrefix + "stock:" + item }

// admitScript counts a request in its window while the count is under
// the limit, and sets the window's expiry, in one step on the server.
//
// KEYS[1] window key; ARGV[1] limit; ARGV[2] expiry in milliseconds.
// Answers {allowed (0 or 1), count}.
var admitScript = goredis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, n}
`)

// Admit counts one request of caller against w: one Lua call (atomic),
// GET then SET (naive), or the same under WATCH (watch).
func (s *Store) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	n := w.Number(s.base.Config.Now())
	key := windowKey(caller, n)
	a := story.Admission{Window: n}
	if s.base.Config.Strategy == StrategyAtomic {
		got, err := admitScript.Run(ctx, s.redis(), []string{key}, w.Limit, w.Expiry().Milliseconds()).Int64Slice()
		if err != nil {
			return a, fmt.Errorf("admit %s: %w", key, err)
		}
		if len(got) != 2 {
			return a, fmt.Errorf("admit %s: script answered %v, want [allowed count]", key, got)
		}
		a.Allowed, a.Count = got[0] == 1, got[1]
		return a, nil
	}
	err := s.readThenWrite(ctx, key, func(r goredis.Cmdable) (write, error) {
		c, err := getInt(ctx, r, key)
		if err != nil {
			return nil, err
		}
		if c >= w.Limit {
			a.Allowed, a.Count = false, c
			return nil, nil
		}
		a.Allowed, a.Count = true, c+1
		return func(p goredis.Pipeliner) { p.Set(ctx, key, a.Count, w.Expiry()) }, nil
	})
	if err != nil {
		return story.Admission{}, fmt.Errorf("admit %s: %w", key, err)
	}
	return a, nil
}

// Admitted reads caller's count in window n, 0 once it expired.
func (s *Store) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	return s.readBack(ctx, "admitted", windowKey(caller, n))
}

// Records counts caller's window keys the server still holds.
func (s *Store) Records(ctx context.Context, caller string, _ story.Window) (int64, error) {
	var n int64
	iter := s.redis().Scan(ctx, 0, KeyPrefix+"rl:"+caller+":*", 100).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		return 0, fmt.Errorf("records of %s: %w", caller, err)
	}
	return n, nil
}

// stockScript claims one copy while claims are below the stock: a
// decrement of what is left with a floor at zero, in one step.
//
// KEYS[1] claims key; ARGV[1] stock; ARGV[2] lifetime in milliseconds.
// Answers 1 when this request took a copy, else 0.
var stockScript = goredis.NewScript(`
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// CheckoutOf claims one of stock copies of item for buyer. A stock of one
// is Checkout, whose claim is a reservation of its own.
func (s *Store) CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	if stock == 1 {
		return s.Checkout(ctx, item, buyer)
	}
	key := stockKey(item)
	if s.base.Config.Strategy == StrategyAtomic {
		got, err := stockScript.Run(ctx, s.redis(), []string{key}, stock, RecordTTL.Milliseconds()).Int64()
		if err != nil {
			return false, fmt.Errorf("checkout %s: %w", key, err)
		}
		return got == 1, nil
	}
	var won bool
	err := s.readThenWrite(ctx, key, func(r goredis.Cmdable) (write, error) {
		c, err := getInt(ctx, r, key)
		if err != nil {
			return nil, err
		}
		if won = c < stock; !won {
			return nil, nil
		}
		return func(p goredis.Pipeliner) { p.Set(ctx, key, c+1, RecordTTL) }, nil
	})
	if err != nil {
		return false, fmt.Errorf("checkout %s: %w", key, err)
	}
	return won, nil
}
