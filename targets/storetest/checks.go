package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	stories "github.com/racelab/racelab/targets/story"
)

// QuotaLimit is the quota story's five downloads a day.
const QuotaLimit = stories.DailyLimit

// Outcome is what one burst on one fresh key came to: what the requests
// were told, and what the store holds afterwards.
type Outcome struct {
	Allowed int64   // yes answers: hits counted, downloads granted, checkouts won
	Refused int64   // no answers
	Counted int64   // what the store holds: the views, the quota count, the claims
	Totals  []int64 // the counter's answers, sorted; nil for the other stories
}

// String is the outcome as %+v shows a struct, without Totals when it has
// none.
func (o Outcome) String() string {
	s := fmt.Sprintf("{Allowed:%d Refused:%d Counted:%d", o.Allowed, o.Refused, o.Counted)
	if o.Totals != nil {
		s += fmt.Sprintf(" Totals:%v", o.Totals)
	}
	return s + "}"
}

func (o Outcome) equal(p Outcome) bool {
	return o.Allowed == p.Allowed && o.Refused == p.Refused && o.Counted == p.Counted && slices.Equal(o.Totals, p.Totals)
}

// Hits releases n hits on slug together and reads the views they left. It
// answers the first request error, if any.
func Hits(ctx context.Context, s Counter, slug string, n int) (Outcome, error) {
	type answer struct {
		total int64
		err   error
	}
	answers := Burst(n, func(int) answer {
		total, err := s.Hit(ctx, slug)
		return answer{total, err}
	})
	var o Outcome
	for _, a := range answers {
		if a.err != nil {
			return o, a.err
		}
		o.Allowed++
		o.Totals = append(o.Totals, a.total)
	}
	slices.Sort(o.Totals)
	var err error
	o.Counted, err = s.Views(ctx, slug)
	return o, err
}

// Downloads releases n downloads by visitor together, at QuotaLimit, and
// reads the count they left. It answers the first request error, if any.
func Downloads(ctx context.Context, s Quota, visitor string, n int) (Outcome, error) {
	o, err := decide(n, func(int) (bool, error) {
		granted, _, err := s.Consume(ctx, visitor, QuotaLimit)
		return granted, err
	})
	if err != nil {
		return o, err
	}
	o.Counted, err = s.Count(ctx, visitor)
	return o, err
}

// Checkouts releases n checkouts of item together, by buyer-0 to
// buyer-(n-1), and reads the claims they left. It answers the first request
// error, if any.
func Checkouts(ctx context.Context, s Inventory, item string, n int) (Outcome, error) {
	o, err := decide(n, func(i int) (bool, error) {
		return s.Checkout(ctx, item, fmt.Sprintf("buyer-%d", i))
	})
	if err != nil {
		return o, err
	}
	o.Counted, err = s.Claims(ctx, item)
	return o, err
}

// decide releases n requests together that are each told yes or no, and
// counts the answers; it answers the first request error, if any.
func decide(n int, request func(i int) (bool, error)) (Outcome, error) {
	type answer struct {
		yes bool
		err error
	}
	answers := Burst(n, func(i int) answer {
		yes, err := request(i)
		return answer{yes, err}
	})
	var o Outcome
	for _, a := range answers {
		switch {
		case a.err != nil:
			return o, a.err
		case a.yes:
			o.Allowed++
		default:
			o.Refused++
		}
	}
	return o, nil
}

// story is one scenario's burst against one store, with what a strategy
// that holds answers and what shows the race.
type story struct {
	burst func(ctx context.Context, key string, n int) (Outcome, error)
	// want is the outcome of n requests on a strategy that holds.
	want func(n int) Outcome
	// raced says whether an outcome shows the lost update.
	raced func(Outcome) bool
}

// counter: every hit counted, answered 1..n; raced when a hit was lost or
// two hits were answered the same total.
func counter(s Counter) story {
	return story{
		burst: func(ctx context.Context, slug string, n int) (Outcome, error) { return Hits(ctx, s, slug, n) },
		want: func(n int) Outcome {
			return Outcome{Allowed: int64(n), Counted: int64(n), Totals: OneTo(n)}
		},
		raced: func(o Outcome) bool {
			return o.Counted < o.Allowed || len(slices.Compact(slices.Clone(o.Totals))) != len(o.Totals)
		},
	}
}

// quota: QuotaLimit granted (n when fewer), the rest refused, the count
// equal to the grants; raced when more were granted than the limit or the
// count differs from the grants.
func quota(s Quota) story {
	return story{
		burst: func(ctx context.Context, visitor string, n int) (Outcome, error) {
			return Downloads(ctx, s, visitor, n)
		},
		want: func(n int) Outcome {
			granted := min(int64(n), QuotaLimit)
			return Outcome{Allowed: granted, Refused: int64(n) - granted, Counted: granted}
		},
		raced: func(o Outcome) bool { return o.Allowed > QuotaLimit || o.Counted != o.Allowed },
	}
}

// inventory: the one item sold once and claimed once; raced when it was
// sold more than once or the claims differ from the sales.
func inventory(s Inventory) story {
	return story{
		burst: func(ctx context.Context, item string, n int) (Outcome, error) { return Checkouts(ctx, s, item, n) },
		want: func(n int) Outcome {
			sold := min(int64(n), 1)
			return Outcome{Allowed: sold, Refused: int64(n) - sold, Counted: sold}
		},
		raced: func(o Outcome) bool { return o.Allowed > 1 || o.Counted != o.Allowed },
	}
}

// exact runs rounds bursts of n requests of st, each on a fresh key, and
// fails at the first request error or the first round whose outcome is not
// the one a strategy that holds must give.
func exact(tb testing.TB, st story, rounds, n int) {
	tb.Helper()
	ctx := tb.Context()
	want := st.want(n)
	for round := range rounds {
		got, err := st.burst(ctx, Key(tb, round), n)
		if err != nil {
			tb.Fatalf("round %d: %v", round+1, err)
		}
		if !got.equal(want) {
			tb.Fatalf("round %d of %d at N=%d: got %+v, want %+v", round+1, rounds, n, got, want)
		}
	}
}

// CounterExact fails unless every one of rounds bursts of n hits on a fresh
// slug is counted n times and answered the totals 1 to n.
func CounterExact(tb testing.TB, s Counter, rounds, n int) {
	tb.Helper()
	exact(tb, counter(s), rounds, n)
}

// QuotaExact fails unless every one of rounds bursts of n downloads by a
// fresh visitor grants QuotaLimit of them (all n when fewer), refuses the
// rest and leaves the count at the grants: at N=12, 5 granted, 7 refused,
// count 5.
func QuotaExact(tb testing.TB, s Quota, rounds, n int) {
	tb.Helper()
	exact(tb, quota(s), rounds, n)
}

// InventoryExact fails unless every one of rounds bursts of n checkouts of
// a fresh item sells it exactly once, refuses the rest and records one
// claim.
func InventoryExact(tb testing.TB, s Inventory, rounds, n int) {
	tb.Helper()
	exact(tb, inventory(s), rounds, n)
}

// Holds runs every story rounds times at n simultaneous requests, the quota
// also at 12 (its story's figure), each as a subtest that fails at the
// first round a strategy that must never lose an update got wrong.
func Holds(t *testing.T, s Store, rounds, n int) {
	t.Helper()
	t.Run("counter", func(t *testing.T) { CounterExact(t, s, rounds, n) })
	t.Run("quota-12", func(t *testing.T) { QuotaExact(t, s, rounds, 12) })
	t.Run(fmt.Sprintf("quota-%d", n), func(t *testing.T) { QuotaExact(t, s, rounds, n) })
	t.Run("inventory", func(t *testing.T) { InventoryExact(t, s, rounds, n) })
}

// Share is in how many rounds a strategy that loses updates must show it.
// The race depends on the scheduler, which is the point, so a test asks for
// the share its store shows reliably.
type Share int

// The shares a test can ask for.
const (
	Some Share = iota + 1 // at least one round
	Most                  // more than half of the rounds
	All                   // every round
)

func (sh Share) String() string {
	switch sh {
	case Some:
		return "some"
	case Most:
		return "most"
	case All:
		return "all"
	}
	return fmt.Sprintf("Share(%d)", int(sh))
}

// met says whether raced rounds of rounds are the share.
func (sh Share) met(raced, rounds int) bool {
	switch sh {
	case Some:
		return raced > 0
	case Most:
		return raced > rounds/2
	case All:
		return raced == rounds
	}
	return false
}

// loses runs rounds bursts of n requests of st, each on a fresh key, fails
// at the first request error, and fails unless the race showed in the
// share of rounds asked for.
func loses(tb testing.TB, st story, rounds, n int, want Share) {
	tb.Helper()
	ctx := tb.Context()
	raced := 0
	var example Outcome
	for round := range rounds {
		got, err := st.burst(ctx, Key(tb, round), n)
		if err != nil {
			tb.Fatalf("round %d: %v", round+1, err)
		}
		if st.raced(got) {
			raced++
			example = got
		}
	}
	if raced > 0 {
		tb.Logf("race showed in %d of %d rounds at N=%d (e.g. %+v)", raced, rounds, n, example)
	}
	if !want.met(raced, rounds) {
		tb.Errorf("race showed in %d of %d rounds at N=%d, want %v", raced, rounds, n, want)
	}
}

// CounterLoses fails unless, in the share want of rounds bursts of n hits
// on a fresh slug, a hit was lost or two hits were answered the same total.
func CounterLoses(tb testing.TB, s Counter, rounds, n int, want Share) {
	tb.Helper()
	loses(tb, counter(s), rounds, n, want)
}

// QuotaLoses fails unless, in the share want of rounds bursts of n
// downloads by a fresh visitor, more than QuotaLimit were granted or the
// count differs from the grants.
func QuotaLoses(tb testing.TB, s Quota, rounds, n int, want Share) {
	tb.Helper()
	loses(tb, quota(s), rounds, n, want)
}

// InventoryLoses fails unless, in the share want of rounds bursts of n
// checkouts of a fresh item, it was sold more than once or the claims
// differ from the sales.
func InventoryLoses(tb testing.TB, s Inventory, rounds, n int, want Share) {
	tb.Helper()
	loses(tb, inventory(s), rounds, n, want)
}

// LosesUpdates runs every story rounds times at n simultaneous requests,
// each as a subtest that fails unless a naive strategy showed the race in
// the share want of its rounds.
func LosesUpdates(t *testing.T, s Store, rounds, n int, want Share) {
	t.Helper()
	t.Run("counter", func(t *testing.T) { CounterLoses(t, s, rounds, n, want) })
	t.Run(fmt.Sprintf("quota-%d", n), func(t *testing.T) { QuotaLoses(t, s, rounds, n, want) })
	t.Run("inventory", func(t *testing.T) { InventoryLoses(t, s, rounds, n, want) })
}

// QuotaDayRollsOver checks, one request at a time, that the limit refuses
// the sixth download and that a new day starts from zero without anyone
// resetting the key. s must read the time from clock, which it sets.
func QuotaDayRollsOver(tb testing.TB, s Quota, clock *Clock) {
	tb.Helper()
	day1 := time.Date(2026, 5, 20, 23, 59, 0, 0, time.UTC)
	clock.Set(day1)
	ctx := tb.Context()
	visitor := Key(tb, 0)

	type answer struct {
		Granted bool
		Count   int64
	}
	var got []answer
	for range 6 {
		g, c, err := s.Consume(ctx, visitor, QuotaLimit)
		if err != nil {
			tb.Fatal(err)
		}
		got = append(got, answer{g, c})
	}
	clock.Set(day1.Add(2 * time.Minute))
	g, c, err := s.Consume(ctx, visitor, QuotaLimit)
	if err != nil {
		tb.Fatal(err)
	}
	got = append(got, answer{g, c})
	count, err := s.Count(ctx, visitor)
	if err != nil {
		tb.Fatal(err)
	}

	want := []answer{{true, 1}, {true, 2}, {true, 3}, {true, 4}, {true, 5}, {false, 5}, {true, 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Errorf("answers: got %v, want %v", got, want)
	}
	if count != 1 {
		tb.Errorf("count on day 2: got %d, want 1", count)
	}
}

// DayStep is one download of a QuotaDays check: its instant, and what it
// must be answered; Count is also what the store must read after it.
type DayStep struct {
	At      string // RFC 3339 instant of the download
	Granted bool
	Count   int64
}

// DaySteps is a day of downloads up to the limit and past it, midnight UTC,
// and a later day given in another zone.
func DaySteps() []DayStep {
	return []DayStep{
		{"2026-03-01T09:00:00Z", true, 1},
		{"2026-03-01T09:00:01Z", true, 2},
		{"2026-03-01T09:00:02Z", true, 3},
		{"2026-03-01T09:00:03Z", true, 4},
		{"2026-03-01T12:00:00Z", true, 5},
		{"2026-03-01T12:00:01Z", false, 5},
		{"2026-03-01T23:59:59Z", false, 5},
		// Midnight UTC: the stored day no longer matches, the count starts over.
		{"2026-03-02T00:00:00Z", true, 1},
		// A later day in another zone is still judged by its UTC date.
		{"2026-03-02T23:30:00-05:00", true, 1},
	}
}

// QuotaDays makes the downloads of steps by one visitor, one at a time at
// QuotaLimit, each at its instant on clock, which s must read the time
// from, and checks each answer and the count read after it.
func QuotaDays(tb testing.TB, s Quota, clock *Clock, steps []DayStep) {
	tb.Helper()
	ctx := tb.Context()
	visitor := Key(tb, 0)
	for i, st := range steps {
		at, err := time.Parse(time.RFC3339, st.At)
		if err != nil {
			tb.Fatal(err)
		}
		clock.Set(at)
		granted, count, err := s.Consume(ctx, visitor, QuotaLimit)
		if err != nil {
			tb.Fatal(err)
		}
		if granted != st.Granted || count != st.Count {
			tb.Errorf("step %d at %s: got (%t, %d), want (%t, %d)", i, st.At, granted, count, st.Granted, st.Count)
		}
		got, err := s.Count(ctx, visitor)
		if err != nil {
			tb.Fatal(err)
		}
		if got != st.Count {
			tb.Errorf("step %d at %s: Count = %d, want %d", i, st.At, got, st.Count)
		}
	}
}
