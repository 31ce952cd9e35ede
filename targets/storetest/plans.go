package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	stories "github.com/racelab/racelab/targets/story"
)

// Plans is the subscription story's store interface (stale-plan).
type Plans = stories.Plans

// PlansN is how many downloads PlansExact releases at once: more than the
// daily limit, so that a quota that lets two through on one count shows.
const PlansN = QuotaN

// planStep is one request of a plan check and what it must answer.
type planStep struct {
	what    string
	granted bool
	count   int64
}

// subscribe subscribes a fresh subscriber and answers its name.
func subscribe(tb testing.TB, s Plans, round int) string {
	tb.Helper()
	sub := Key(tb, round)
	if err := s.Subscribe(tb.Context(), sub); err != nil {
		tb.Fatal(err)
	}
	return sub
}

// download asks for one original at QuotaLimit and checks the answer.
func download(tb testing.TB, s Plans, sub string, want planStep) {
	tb.Helper()
	granted, count, err := s.Download(tb.Context(), sub, QuotaLimit)
	if err != nil {
		tb.Fatalf("%s: %v", want.what, err)
	}
	if granted != want.granted || count != want.count {
		tb.Errorf("%s: got (%t, %d), want (%t, %d)", want.what, granted, count, want.granted, want.count)
	}
}

// downloads checks the subscriber's count of originals today.
func downloads(tb testing.TB, s Plans, sub string, want int64, when string) {
	tb.Helper()
	checkRead(tb, "Downloads", s.Downloads, sub, want, when)
}

// ReadThenCancel subscribes sub, reads its plan as a page does (it must
// say paid) and cancels it: the steps after which a plan cache, if the
// store keeps one, holds a plan that is no longer true.
func ReadThenCancel(tb testing.TB, s Plans, sub string) {
	tb.Helper()
	if err := s.Subscribe(tb.Context(), sub); err != nil {
		tb.Fatal(err)
	}
	paid(tb, s, sub, true, "a page before the cancel")
	if err := s.Cancel(tb.Context(), sub); err != nil {
		tb.Fatal(err)
	}
}

// paid checks the plan as a page reads it.
func paid(tb testing.TB, s Plans, sub string, want bool, when string) {
	tb.Helper()
	checkRead(tb, "Paid", s.Paid, sub, want, when)
}

// checkRead checks what the store's reader, named name, answers for sub: one
// check for every read, so that their failures are told alike.
func checkRead[T comparable](tb testing.TB, name string, reader func(context.Context, string) (T, error), sub string, want T, when string) {
	tb.Helper()
	got, err := reader(tb.Context(), sub)
	if err != nil {
		tb.Fatal(err)
	}
	if got != want {
		tb.Errorf("%s: %s = %v, want %v", when, name, got, want)
	}
}

// PlansExact checks a strategy that reads the plan and the day's count
// where it decides (the atomic ones, WATCH, FOR UPDATE, SERIALIZABLE), on
// rounds fresh subscribers each: a paid plan grants originals; a burst of
// PlansN at once grants exactly up to QuotaLimit and counts each; a
// cancelled plan grants nothing more, not even to a burst; and a plan
// cancelled before any read refuses the first download.
func PlansExact(tb testing.TB, s Plans, rounds int) {
	tb.Helper()
	ctx := tb.Context()
	for round := range rounds {
		sub := subscribe(tb, s, round)
		paid(tb, s, sub, true, "after subscribing")
		download(tb, s, sub, planStep{"first download", true, 1})
		granted := Burst(PlansN, func(int) bool {
			ok, _, err := s.Download(ctx, sub, QuotaLimit)
			if err != nil {
				tb.Error(err)
			}
			return ok
		})
		if n := count(granted); n != QuotaLimit-1 {
			tb.Errorf("round %d: a burst of %d after one download granted %d; want %d", round, PlansN, n, QuotaLimit-1)
		}
		downloads(tb, s, sub, QuotaLimit, "after the burst")

		// A subscriber who cancels with originals left today.
		sub = subscribe(tb, s, round)
		download(tb, s, sub, planStep{"download before the cancel", true, 1})
		if err := s.Cancel(ctx, sub); err != nil {
			tb.Fatal(err)
		}
		granted = Burst(PlansN, func(int) bool {
			ok, _, err := s.Download(ctx, sub, QuotaLimit)
			if err != nil {
				tb.Error(err)
			}
			return ok
		})
		if n := count(granted); n != 0 {
			tb.Errorf("round %d: %d of a burst of %d granted after the cancel; want none", round, n, PlansN)
		}
		paid(tb, s, sub, false, "after the cancel")
		downloads(tb, s, sub, 1, "after the cancel")

		// Never subscribed, and subscribed then cancelled unread.
		download(tb, s, Key(tb, round), planStep{"download without a plan", false, 0})
		sub = subscribe(tb, s, round)
		if err := s.Cancel(ctx, sub); err != nil {
			tb.Fatal(err)
		}
		download(tb, s, sub, planStep{"download after a cancel never read", false, 0})
	}
}

func count(oks []bool) int64 {
	var n int64
	for _, ok := range oks {
		if ok {
			n++
		}
	}
	return n
}

// PlansStale checks the naive strategy's cached plan, one request at a
// time on v, the virtual clock s runs on, with a plan cache of ttl: after
// a page has read the plan, a cancel goes unseen and originals are still
// granted (and counted) until the read is ttl old, and refused from then
// on; a plan never read before the cancel is read fresh.
func PlansStale(tb testing.TB, s Plans, v *clock.Virtual, ttl time.Duration) {
	tb.Helper()
	ctx := tb.Context()
	sub := Key(tb, 0)
	ReadThenCancel(tb, s, sub)
	download(tb, s, sub, planStep{"download right after the cancel", true, 1})
	paid(tb, s, sub, true, "a page right after the cancel")
	// The read is dated when it was asked, before the cancel: it expires
	// at most ttl after it.
	sleep(tb, v, ttl/2)
	download(tb, s, sub, planStep{"download half a TTL after the cancel", true, 2})
	sleep(tb, v, ttl-ttl/2)
	download(tb, s, sub, planStep{"download a TTL after the cancel", false, 0})
	paid(tb, s, sub, false, "a page a TTL after the cancel")
	downloads(tb, s, sub, 2, "a TTL after the cancel")

	fresh := subscribe(tb, s, 1)
	if err := s.Cancel(ctx, fresh); err != nil {
		tb.Fatal(err)
	}
	download(tb, s, fresh, planStep{"download after a cancel never read", false, 0})
}

func sleep(tb testing.TB, v *clock.Virtual, d time.Duration) {
	tb.Helper()
	if err := v.Sleep(tb.Context(), d); err != nil {
		tb.Fatal(err)
	}
}

// PlansDayRollsOver checks, one request at a time on v, the virtual clock
// s runs on, that the limit refuses the sixth original of a day and that
// the next UTC day starts from zero, even when the first day's last
// original came a moment before midnight: the count is the store's day's,
// whatever a server's own expiry says in real time.
func PlansDayRollsOver(tb testing.TB, s Plans, v *clock.Virtual) {
	tb.Helper()
	now := v.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	sleep(tb, v, midnight.Sub(now)-time.Second)
	sub := subscribe(tb, s, 0)
	for i := range QuotaLimit {
		download(tb, s, sub, planStep{fmt.Sprintf("download %d", i+1), true, int64(i + 1)})
	}
	download(tb, s, sub, planStep{"download over the limit", false, QuotaLimit})
	sleep(tb, v, time.Second)
	download(tb, s, sub, planStep{"first download of the next day", true, 1})
	downloads(tb, s, sub, 1, "the next day")
}
