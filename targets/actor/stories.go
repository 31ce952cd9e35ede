package actor

import (
	"context"
	"fmt"

	"github.com/racelab/racelab/targets/story"
)

// Each object keeps its whole state under one storage key.
const (
	viewsKey = "views"
	quotaKey = "quota"
	itemKey  = "item"
)

// quotaState is a visitor's downloads on one UTC day. Keeping the day next
// to the count makes the quota reset itself when the day changes: there is
// nothing to clean up and no expiry to schedule.
type quotaState struct {
	Day   string
	Count int64
}

// itemState is what an item's object records about its claims.
type itemState struct {
	Claims int64
	Buyer  string // the buyer of the last recorded claim
}

// grant is a quota object's answer to one download.
type grant struct {
	granted bool
	count   int64
}

// The stories record, in the trace of the request's context, a read when
// the object's storage answers, a write when the storage has taken it, a
// fetch when await-fetch starts its outside I/O, and a refuse when a
// download or a checkout is turned down.

// Hit records one view of slug in the slug's object and answers the total
// it stored.
func (s *Store) Hit(ctx context.Context, slug string) (int64, error) {
	if err := s.reach(ctx, "hit", slug); err != nil {
		return 0, err
	}
	n, err := call(ctx, s, address{counters, slug}, func(o *object, reply func(int64)) {
		views, open := load[int64](o, viewsKey)
		if !open {
			return
		}
		o.record(ctx, story.OpRead, itoa(views), "")
		// Computed before the continuation rather than in it, which then
		// captures a copy and not the variable: one allocation less a
		// hit (issue 24).
		total := views + 1
		o.resume(ctx, func(o *object) {
			if o.save(viewsKey, total) {
				o.record(ctx, story.OpWrite, itoa(total), "")
				reply(total)
			}
		})
	})
	if err != nil {
		return 0, fmt.Errorf("hit %q: %w", slug, err)
	}
	return n, nil
}

// Views reads the total stored in slug's object, 0 if it has none.
func (s *Store) Views(ctx context.Context, slug string) (int64, error) {
	n, err := read(ctx, s, address{counters, slug}, viewsKey, itoa)
	if err != nil {
		return 0, fmt.Errorf("views of %q: %w", slug, err)
	}
	return n, nil
}

// Consume asks the visitor's object for one download. It is granted iff the
// visitor's count for today is below limit, and then counted; a refused
// download is not counted. The count answered is the one stored afterwards.
func (s *Store) Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	if err := s.reach(ctx, "consume", visitor); err != nil {
		return false, 0, err
	}
	g, err := call(ctx, s, address{quotas, visitor}, func(o *object, reply func(grant)) {
		takeOne(ctx, o, limit, reply)
	})
	if err != nil {
		return false, 0, fmt.Errorf("consume for %q: %w", visitor, err)
	}
	return g.granted, g.count, nil
}

// takeOne is the day's quota decided in the object: granted and counted
// while today's count is below limit, refused and not counted at it.
func takeOne(ctx context.Context, o *object, limit int64, reply func(grant)) {
	q, open := loadToday(ctx, o)
	if !open {
		return
	}
	takeBelow(ctx, o, q.Count, limit, func(o *object, n int64) (string, bool) {
		q.Count = n
		return "day " + q.Day, o.save(quotaKey, q)
	}, reply)
}

// takeBelow decides one request on a count n just read: refused at limit,
// else granted once save has written n+1 (and said it in a note for the
// trace). Under await-fetch the write comes after the await, so a request
// in between reads the same n: the lost update the strategy exists for.
func takeBelow(ctx context.Context, o *object, n, limit int64, save func(o *object, n int64) (note string, ok bool), reply func(grant)) {
	if n >= limit {
		o.record(ctx, story.OpRefuse, itoa(n), fmt.Sprintf("limit of %d reached", limit))
		reply(grant{false, n})
		return
	}
	o.resume(ctx, func(o *object) {
		if note, ok := save(o, n+1); ok {
			o.record(ctx, story.OpWrite, itoa(n+1), note)
			reply(grant{true, n + 1})
		}
	})
}

// loadToday loads the visitor's quota and records the read. A quota of
// another day answers as today's, with nothing counted yet. It answers
// false, as load does, when the object is no longer open.
func loadToday(ctx context.Context, o *object) (quotaState, bool) {
	day := o.s.today()
	q, open := load[quotaState](o, quotaKey)
	if !open {
		return q, false
	}
	o.record(ctx, story.OpRead, itoa(q.Count), dayNote(q, day))
	if q.Day != day {
		q = quotaState{Day: day}
	}
	return q, true
}

// dayNote says which day a stored quota counts, and whether it is over.
func dayNote(q quotaState, today string) string {
	switch q.Day {
	case "":
		return "no downloads yet"
	case today:
		return "day " + q.Day
	}
	return "day " + q.Day + ", over: today starts at 0"
}

// Count reads the visitor's count for today, 0 if the visitor has not
// downloaded anything since the day began.
func (s *Store) Count(ctx context.Context, visitor string) (int64, error) {
	n, err := call(ctx, s, address{quotas, visitor}, func(o *object, reply func(int64)) {
		if q, open := loadToday(ctx, o); open {
			reply(q.Count)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("count for %q: %w", visitor, err)
	}
	return n, nil
}

// Checkout asks the item's object to claim it for buyer and answers whether
// this request got it: the first claim succeeds, later ones are refused
// because the Stock of one is gone.
func (s *Store) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	return s.checkout(ctx, item, buyer, Stock)
}

func (s *Store) checkout(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	if err := s.reach(ctx, "checkout", item); err != nil {
		return false, err
	}
	ok, err := call(ctx, s, address{items, item}, func(o *object, reply func(bool)) {
		it, open := load[itemState](o, itemKey)
		if !open {
			return
		}
		o.record(ctx, story.OpRead, itoa(it.Claims), buyerNote(it))
		if it.Claims >= stock {
			o.record(ctx, story.OpRefuse, itoa(it.Claims), "sold out: "+buyerNote(it))
			reply(false)
			return
		}
		o.resume(ctx, func(o *object) {
			it.Claims++
			it.Buyer = buyer
			if o.save(itemKey, it) {
				o.record(ctx, story.OpWrite, itoa(it.Claims), buyerNote(it))
				reply(true)
			}
		})
	})
	if err != nil {
		return false, fmt.Errorf("checkout of %q: %w", item, err)
	}
	return ok, nil
}

// buyerNote names the buyer of an item's last claim, if any.
func buyerNote(it itemState) string {
	if it.Buyer == "" {
		return ""
	}
	return "claimed by " + it.Buyer
}

// Claims reads how many claims the item's object recorded.
func (s *Store) Claims(ctx context.Context, item string) (int64, error) {
	n, err := call(ctx, s, address{items, item}, func(o *object, reply func(int64)) {
		if it, open := load[itemState](o, itemKey); open {
			o.record(ctx, story.OpRead, itoa(it.Claims), buyerNote(it))
			reply(it.Claims)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("claims on %q: %w", item, err)
	}
	return n, nil
}
