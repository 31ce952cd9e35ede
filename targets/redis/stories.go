package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/racelab/racelab/targets/clock"
)

// The keys of each story. The kind comes before the name, so that no name,
// whatever it holds, can make one story's key another's.
func viewsKey(slug string) string    { return KeyPrefix + "views:" + slug }
func quotaKey(visitor string) string { return KeyPrefix + "quota:" + visitor }
func claimKey(item string) string    { return KeyPrefix + "claim:" + item }
func claimsKey(item string) string   { return KeyPrefix + "claims:" + item }

// The subscription story's keys: the plan, story.Paid or story.Cancelled,
// and the day's count of originals, a hash of day and count as the
// quota's is.
func planKey(subscriber string) string      { return KeyPrefix + "plan:" + subscriber }
func downloadsKey(subscriber string) string { return KeyPrefix + "downloads:" + subscriber }

// Hit records one view of slug and answers the total it stored.
func (s *Store) Hit(ctx context.Context, slug string) (int64, error) {
	key := viewsKey(slug)
	if s.base.Config.Strategy == StrategyAtomic {
		var incr *goredis.IntCmd
		_, err := s.redis().TxPipelined(ctx, func(p goredis.Pipeliner) error {
			incr = p.Incr(ctx, key)
			p.Expire(ctx, key, RecordTTL)
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("hit %s: %w", key, err)
		}
		return incr.Val(), nil
	}
	var total int64
	err := s.readThenWrite(ctx, key, func(r goredis.Cmdable) (write, error) {
		n, err := getInt(ctx, r, key)
		if err != nil {
			return nil, err
		}
		total = n + 1
		return func(p goredis.Pipeliner) { p.Set(ctx, key, total, RecordTTL) }, nil
	})
	if err != nil {
		return 0, fmt.Errorf("hit %s: %w", key, err)
	}
	return total, nil
}

// Views reads the total stored for slug, 0 if it has none.
func (s *Store) Views(ctx context.Context, slug string) (int64, error) {
	return s.readBack(ctx, "views", viewsKey(slug))
}

// consumeScript grants a download when the visitor's count for the day is
// under the limit, in one step on the server. The key is a hash holding the
// day and the count: a count from another day counts as 0, so the day rolls
// over by itself, and the key expires when its day ends.
//
// KEYS[1] quota key; ARGV[1] day; ARGV[2] limit; ARGV[3] milliseconds left
// in the day. Answers {granted (0 or 1), count}.
var consumeScript = goredis.NewScript(`
local key = KEYS[1]` + takeOneLua)

// takeOneLua is the daily quota decided on the server, the end of
// consumeScript and downloadScript (the Lua twin of takeOne): the count of
// the hash at key, a count from another day counting as 0, is refused at
// the limit and else counted, the key then living ARGV[3] milliseconds.
// ARGV[1] day; ARGV[2] limit. Answers {granted (0 or 1), count}.
const takeOneLua = `
local s = redis.call('HMGET', key, 'day', 'count')
local n = 0
if s[1] == ARGV[1] then n = tonumber(s[2]) or 0 end
if n >= tonumber(ARGV[2]) then return {0, n} end
n = n + 1
redis.call('HSET', key, 'day', ARGV[1], 'count', n)
redis.call('PEXPIRE', key, ARGV[3])
return {1, n}
`

// runTakeOne runs script, which ends in takeOneLua, on keys for day, limit
// and a key lifetime of ttl, and answers its {granted, count}.
func runTakeOne(ctx context.Context, c goredis.Scripter, script *goredis.Script, keys []string, day string, limit int64, ttl time.Duration) (granted bool, count int64, err error) {
	got, err := script.Run(ctx, c, keys, day, limit, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(got) != 2 {
		return false, 0, fmt.Errorf("script answered %v, want [granted count]", got)
	}
	return got[0] == 1, got[1], nil
}

// Consume asks for one download for visitor and answers whether it was
// granted and the count the store answered with. A refused download is not
// counted.
func (s *Store) Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error) {
	key := quotaKey(visitor)
	day, ttl := s.day()
	if s.base.Config.Strategy == StrategyAtomic {
		granted, count, err = runTakeOne(ctx, s.redis(), consumeScript, []string{key}, day, limit, ttl)
		if err != nil {
			return false, 0, fmt.Errorf("consume %s: %w", key, err)
		}
		return granted, count, nil
	}
	err = s.readThenWrite(ctx, key, func(r goredis.Cmdable) (w write, err error) {
		granted, count, w, err = takeOne(ctx, r, key, day, limit, ttl)
		return w, err
	})
	if err != nil {
		return false, 0, fmt.Errorf("consume %s: %w", key, err)
	}
	return granted, count, nil
}

// takeOne reads key's count for day and, while it is under limit, answers
// the write that counts one more: the read-then-write half of a daily
// quota, for the strategies that do it in Go.
func takeOne(ctx context.Context, r goredis.Cmdable, key, day string, limit int64, ttl time.Duration) (granted bool, count int64, w write, err error) {
	n, err := dayCount(ctx, r, key, day)
	if err != nil || n >= limit {
		return false, n, nil, err
	}
	return true, n + 1, func(p goredis.Pipeliner) {
		p.HSet(ctx, key, "day", day, "count", n+1)
		p.PExpire(ctx, key, ttl)
	}, nil
}

// Count reads the visitor's count for today.
func (s *Store) Count(ctx context.Context, visitor string) (int64, error) {
	return s.todays(ctx, "count", quotaKey(visitor))
}

// todays reads the count for today of the daily-quota hash at key, as
// readBack reads a plain count; what names the read in its error.
func (s *Store) todays(ctx context.Context, what, key string) (int64, error) {
	day, _ := s.day()
	n, err := dayCount(ctx, s.redis(), key, day)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", what, key, err)
	}
	return n, nil
}

// day is the store's UTC day, and the time left until it ends, at least a
// millisecond so that a fresh key never expires before it is written, on
// the real clock; on another, RecordTTL.
func (s *Store) day() (string, time.Duration) {
	now := s.base.Config.Now().UTC()
	if _, wall := s.Clock().(clock.Real); !wall {
		// The server expires keys in real time, which on a virtual clock
		// has nothing to do with the store's day: a key written a
		// virtual millisecond before midnight must not vanish before the
		// next request of the same virtual day. The day field alone rolls
		// the count over; the key lives a record's lifetime.
		return now.Format(time.DateOnly), RecordTTL
	}
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return now.Format(time.DateOnly), max(next.Sub(now), time.Millisecond)
}

// checkoutScript claims an item for one buyer: the claim is a key set only
// if absent, for the length of the reservation, and each claim taken is
// counted in the item's claims record, both in one step on the server.
//
// KEYS[1] claim key; KEYS[2] claims key; ARGV[1] buyer; ARGV[2] reservation
// in milliseconds; ARGV[3] claims record lifetime in milliseconds. Answers 1
// when this request took the claim, else 0.
var checkoutScript = goredis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// Checkout tries to claim item for buyer and answers whether this request
// got it. A claim holds for ReservationTTL.
func (s *Store) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	claim, claims := claimKey(item), claimsKey(item)
	if s.base.Config.Strategy == StrategyAtomic {
		got, err := checkoutScript.Run(ctx, s.redis(), []string{claim, claims},
			buyer, ReservationTTL.Milliseconds(), RecordTTL.Milliseconds()).Int64()
		if err != nil {
			return false, fmt.Errorf("checkout %s: %w", claim, err)
		}
		return got == 1, nil
	}
	var won bool
	err := s.readThenWrite(ctx, claim, func(r goredis.Cmdable) (write, error) {
		err := r.Get(ctx, claim).Err()
		if err == nil { // someone holds the claim
			won = false
			return nil, nil
		}
		if !errors.Is(err, goredis.Nil) {
			return nil, err
		}
		won = true
		return func(p goredis.Pipeliner) {
			p.Set(ctx, claim, buyer, ReservationTTL)
			p.Incr(ctx, claims)
			p.Expire(ctx, claims, RecordTTL)
		}, nil
	})
	if err != nil {
		return false, fmt.Errorf("checkout %s: %w", claim, err)
	}
	return won, nil
}

// Claims reads how many claims the store recorded on item.
func (s *Store) Claims(ctx context.Context, item string) (int64, error) {
	n, err := s.readBack(ctx, "claims", claimsKey(item))
	if err != nil || n > 0 {
		return n, err
	}
	// An item of more than one copy counts its claims apart (CheckoutOf).
	return s.readBack(ctx, "claims", stockKey(item))
}

// readBack is a story's read-back of an integer key, 0 when it is absent,
// its error told as what failed on which key.
func (s *Store) readBack(ctx context.Context, what, key string) (int64, error) {
	n, err := getInt(ctx, s.redis(), key)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", what, key, err)
	}
	return n, nil
}

// getInt reads an integer key, 0 when it is absent.
func getInt(ctx context.Context, r goredis.Cmdable, key string) (int64, error) {
	n, err := r.Get(ctx, key).Int64()
	if errors.Is(err, goredis.Nil) {
		return 0, nil
	}
	return n, err
}

// dayCount reads a quota hash's count, 0 when it is absent or from another
// day.
func dayCount(ctx context.Context, r goredis.Cmdable, key, day string) (int64, error) {
	v, err := r.HMGet(ctx, key, "day", "count").Result()
	if err != nil {
		return 0, err
	}
	if len(v) != 2 || v[0] != day {
		return 0, nil
	}
	s, _ := v[1].(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s holds count %q: %w", key, s, err)
	}
	return n, nil
}
