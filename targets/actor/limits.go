package actor

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/racelab/racelab/targets/story"
)

// The storage keys of the later stories' objects.
const (
	windowsKey = "windows"
	planKey    = "plan"
)

// windowState is a caller's counts, by window number. Each request drops
// the windows whose records would have expired by now, as a KV key's
// expiry does, so the object holds the current and recent windows only,
// and nothing at all once the caller has gone quiet and come back.
type windowState map[int64]int64

// Admit asks the caller's object to count one request against w. The
// object reads, compares and writes within one delivery, so no other
// request of the same caller can come between: never over the limit.
func (s *Store) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	if err := s.reach(ctx, "admit", caller); err != nil {
		return story.Admission{}, err
	}
	a, err := call(ctx, s, address{limiters, caller}, func(o *object, reply func(story.Admission)) {
		st, open := load[windowState](o, windowsKey)
		if !open {
			return
		}
		n := w.Number(s.clock.Now())
		count := st[n]
		// Each window is a key of its own in the trace, as in KV, so that
		// a new window's first write is not read as erasing the last one.
		key := fmt.Sprintf("%s:%d", o.addr, n)
		o.recordKey(ctx, key, story.OpRead, itoa(count), "")
		if count >= w.Limit {
			o.recordKey(ctx, key, story.OpRefuse, itoa(count), fmt.Sprintf("limit of %d reached", w.Limit))
			reply(story.Admission{Count: count, Window: n})
			return
		}
		o.resume(ctx, func(o *object) {
			next := windowState{}
			for k, v := range st {
				if expired(w, k, s.clock.Now().UnixNano()) {
					continue
				}
				next[k] = v
			}
			// The continuation may run after other requests under
			// await-fetch: it writes what it read plus one, as a put does.
			next[n] = count + 1
			if o.save(windowsKey, next) {
				o.recordKey(ctx, key, story.OpWrite, itoa(count+1), "")
				reply(story.Admission{Allowed: true, Count: count + 1, Window: n})
			}
		})
	})
	if err != nil {
		return story.Admission{}, fmt.Errorf("admit for %q: %w", caller, err)
	}
	return a, nil
}

// recordKey is record for a step on one key of the object's storage.
func (o *object) recordKey(ctx context.Context, key, op, value, note string) {
	if story.Tracing(ctx) {
		story.Trace(ctx, story.Step{At: o.s.clock.Now(), Op: op, Key: key, Value: value, Note: note})
	}
}

// expired says whether window k's record is past its expiry at now (in
// nanoseconds): its end plus the expiry, the latest a last write can
// have set it.
func expired(w story.Window, k, now int64) bool {
	return (k+1)*int64(w.Length)+int64(w.Expiry()) <= now
}

// Admitted reads the caller's count in window n.
func (s *Store) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	c, err := call(ctx, s, address{limiters, caller}, func(o *object, reply func(int64)) {
		if st, open := load[windowState](o, windowsKey); open {
			reply(st[n])
		}
	})
	if err != nil {
		return 0, fmt.Errorf("admitted for %q: %w", caller, err)
	}
	return c, nil
}

// Records counts the windows the caller's object still stores. Expired
// ones stay until the caller's next request: the object has nothing to
// run until then.
func (s *Store) Records(ctx context.Context, caller string, _ story.Window) (int64, error) {
	c, err := call(ctx, s, address{limiters, caller}, func(o *object, reply func(int64)) {
		if st, open := load[windowState](o, windowsKey); open {
			o.record(ctx, story.OpRead, itoa(int64(len(st))), "windows "+fmt.Sprint(slices.Sorted(maps.Keys(st))))
			reply(int64(len(st)))
		}
	})
	if err != nil {
		return 0, fmt.Errorf("records for %q: %w", caller, err)
	}
	return c, nil
}

// Subscribe and Cancel set the plan in the subscriber's object, which
// also keeps the subscriber's daily quota: the plan and the count are
// read and written in one place, one request at a time.
func (s *Store) Subscribe(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, true)
}

// Cancel ends the plan: the next download the object takes is refused.
func (s *Store) Cancel(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, false)
}

func (s *Store) setPlan(ctx context.Context, subscriber string, paid bool) error {
	_, err := call(ctx, s, address{quotas, subscriber}, func(o *object, reply func(bool)) {
		if o.save(planKey, paid) {
			o.record(ctx, story.OpWrite, planWord(paid), "")
			reply(true)
		}
	})
	if err != nil {
		return fmt.Errorf("plan for %q: %w", subscriber, err)
	}
	return nil
}

func planWord(paid bool) string {
	if paid {
		return story.Paid
	}
	return story.Cancelled
}

// Paid reads the plan in the subscriber's object: never stale.
func (s *Store) Paid(ctx context.Context, subscriber string) (bool, error) {
	p, err := read(ctx, s, address{quotas, subscriber}, planKey, planWord)
	if err != nil {
		return false, fmt.Errorf("plan for %q: %w", subscriber, err)
	}
	return p, nil
}

// Download reads the plan and the quota in the subscriber's object and
// grants an original only on a paid plan under the limit.
func (s *Store) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	if err := s.reach(ctx, "download", subscriber); err != nil {
		return false, 0, err
	}
	g, err := call(ctx, s, address{quotas, subscriber}, func(o *object, reply func(grant)) {
		paid, open := load[bool](o, planKey)
		if !open {
			return
		}
		if !paid {
			o.record(ctx, story.OpRefuse, story.Cancelled, "no paid plan")
			reply(grant{})
			return
		}
		takeOne(ctx, o, limit, reply)
	})
	if err != nil {
		return false, 0, fmt.Errorf("download for %q: %w", subscriber, err)
	}
	return g.granted, g.count, nil
}

// Downloads reads the subscriber's count today.
func (s *Store) Downloads(ctx context.Context, subscriber string) (int64, error) {
	return s.Count(ctx, subscriber)
}

// CheckoutOf claims one of stock copies of item for buyer: the object
// refuses once the claims reach the stock, so it never goes below zero.
func (s *Store) CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	return s.checkout(ctx, item, buyer, stock)
}
